package owners

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/ownersprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// The owners views.
const (
	ViewTree    = "tree"
	ViewBlame   = "blame"
	ViewTable   = "table"
	ViewSummary = "summary"
	ViewSize    = "size"
)

var ownersViews = []string{ViewTree, ViewBlame, ViewTable, ViewSummary, ViewSize}

// OwnersOptions are the options of kubectl rv owners.
type OwnersOptions struct {
	Selection *cmdutil.SelectionFlags
	Output    *cmdutil.OutputFlags

	View         string
	Manager      string
	Field        string
	Shared       bool
	FailOn       string
	FailOnHazard bool
	failOn       findings.Policy
	ShowSecrets  bool
	Time         string
	// ExpectManager and Drift turn on the drift check.
	ExpectManager string
	Drift         bool
	// IncludeStatus and IncludeScale count the fields written through
	// /status and /scale as drift.
	IncludeStatus bool
	IncludeScale  bool
	// Top is how many of the heaviest objects --view size lists.
	Top int

	// expectManagerSet is true when --expect-manager was given, even empty.
	expectManagerSet bool

	config    owners.Config
	namespace string
	// locator places the fields of -f objects on their files' lines, for
	// the outputs that show positions (positions).
	locator *cmdutil.Locator
	getter  genericclioptions.RESTClientGetter
	now     func() time.Time
	genericiooptions.IOStreams
}

const ownersLong = `Decode metadata.managedFields into who owns which field, and flag ownership hazards.

Objects come from the cluster (like kubectl get) or, with -f, from files or stdin
holding 'kubectl get -o yaml --show-managed-fields' output; no cluster is needed then.
Without arguments, a piped standard input is read as with -f -.

Views (--view):
  tree      the owned fields as a tree; a subtree whose fields all have the same owners is one line
  blame     the object's YAML, each line followed by a comment naming its owners (still valid YAML)
  table     one row per owner of each owned field (MULTI on every row of a shared field)
  summary   one row per managedFields entry: MANAGER, OPERATION, APIVERSION, SUBRESOURCE, LAST WRITE, FIELDS
  size      the weight of managedFields, per kind and for the heaviest objects (--top); for TYPE -A
--time relative|full|none shows ages (default), RFC 3339 times in UTC or no time.

Hazards, shown in every view: a field co-owned by an Apply and an Update manager
(ApplyUpdateShared), fields owned by both kubectl-client-side-apply and a server-side
apply manager (ClientSideApplyMigration), an ancient-changes entry (AncientChanges), a
manager name that hides the writer (GenericManager), entries owning fields the object no
longer has (StaleFields), two entries of one manager and operation (DuplicateEntry).
--fail-on hazard exits 1 when any is shown.

Drift: --expect-manager NAME lists the fields owned by any other manager and exits 1 when
there is one; --drift expects each object's main applier instead. Fields written through
the status or scale subresource are left out unless --include-status or --include-scale.
Narrow it with --field .spec.

Secret values are never printed unless --show-secrets is given.

Docs: docs/owners.md`

const ownersExample = `  # Who owns what in a Deployment, as a tree
  kubectl rv owners deployment/web

  # The Deployment's YAML with each line's owners
  kubectl rv owners deploy web --view blame

  # Who owns the nginx container's image?
  kubectl rv owners deploy/web --field '.spec.template.spec.containers[name=nginx].image'

  # Fields shared by several managers, in every Deployment
  kubectl rv owners deployments -A --shared --view table

  # One row per managedFields entry, from a saved dump, failing CI on hazards
  kubectl get deploy web -o yaml --show-managed-fields > web.yaml
  kubectl rv owners -f web.yaml --view summary --fail-on hazard

  # How much of every Deployment is managedFields, and which are the heaviest
  kubectl rv owners deployments -A --view size

  # CI gate: fail when anything but the ci applier owns a field of the spec
  kubectl rv owners deploy/web --expect-manager ci --field .spec

  # In CI: drift as annotations at the lines of a saved dump (GitHub Actions); -o junit, -o sarif too
  kubectl rv owners -f live.yaml --expect-manager ci --field .spec --include-scale -o github

  # Drift from the main applier, the controllers' /status writes counted too
  kubectl rv owners deploy/web --drift --include-status

  # The same, piped, with times that do not change from run to run
  kubectl get deploy web -o yaml --show-managed-fields | kubectl rv owners --time full`

// NewCmdOwners returns kubectl rv owners.
func NewCmdOwners(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OwnersOptions{
		Selection: cmdutil.NewSelectionFlags(true),
		Output:    cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF),
		View:      ViewTree,
		IOStreams: streams,
	}
	cmd := &cobra.Command{
		Use:               "owners (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ... | -f FILENAME)",
		Short:             "Show who owns which field of an object, from its managedFields",
		Long:              ownersLong,
		Example:           ownersExample,
		ValidArgsFunction: cmdutil.ResourceTypeOrNameCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fs := cmd.Flags()
	o.Selection.AddFlags(fs)
	o.Output.AddFlags(fs)
	fs.StringVar(&o.View, "view", o.View, "How to show the ownership: "+strings.Join(ownersViews, ", ")+".")
	fs.StringVar(&o.Manager, "manager", "", "Show only the fields this field manager owns (alone or with others).")
	fs.StringVar(&o.Field, "field", "", "Show who owns this field and the fields below it, e.g. .spec.replicas or '.spec.template.spec.containers[name=nginx].image'.")
	fs.BoolVar(&o.Shared, "shared", false, "Show only the fields owned by more than one manager entry.")
	cmdutil.AddFailOnFlag(fs, &o.FailOn, owners.Findings, "")
	cmdutil.AddFailOnAlias(fs, &o.FailOnHazard, "fail-on-hazard", "hazard")
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "Show Secret values in the blame view (they are hidden by default).")
	fs.StringVar(&o.ExpectManager, "expect-manager", "", "List the fields owned by any other manager (drift from NAME), and exit 1 when there is one (for CI).")
	fs.BoolVar(&o.Drift, "drift", false, "Like --expect-manager, expecting each object's main applier: the Apply manager owning the most leaves.")
	fs.BoolVar(&o.IncludeStatus, "include-status", false, "With --expect-manager or --drift, count the fields written through the status subresource as drift too (left out by default: controllers report status there).")
	fs.BoolVar(&o.IncludeScale, "include-scale", false, "With --expect-manager or --drift, count the fields written through the scale subresource as drift too (left out by default: a HorizontalPodAutoscaler or kubectl scale sets .spec.replicas there).")
	fs.IntVar(&o.Top, "top", owners.DefaultSizeTop, "With --view size, how many of the heaviest objects to list.")
	fs.StringVar(&o.Time, "time", string(ownersprint.TimeRelative), "How to show when each manager last wrote: relative (an age, 5m), full (RFC 3339 in UTC, stable from run to run) or none.")
	cmdutil.SetFlagValues(fs, "view", ownersViews...)
	cmdutil.SetFlagValues(fs, "time", timeFormatNames()...)
	return cmd
}

func timeFormatNames() []string {
	names := make([]string, len(ownersprint.TimeFormats))
	for i, f := range ownersprint.TimeFormats {
		names[i] = string(f)
	}
	return names
}

func (o *OwnersOptions) SeeFlags(changed func(string) bool) {
	o.expectManagerSet = changed("expect-manager")
}

// Complete fills in the arguments, the namespace and the clients.
func (o *OwnersOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.Selection.Args = args
	o.getter = f
	o.now = time.Now
	if len(args) == 0 && len(o.Selection.Filenames) == 0 && stdinPiped(o.In) {
		// kubectl get ... -o yaml --show-managed-fields | kubectl rv owners
		o.Selection.Filenames = []string{"-"}
	}
	if len(o.Selection.Filenames) == 0 {
		ns, _, err := f.Namespace()
		if err != nil {
			return err
		}
		o.namespace = ns
		// The types go through the one resolver first, so that a mistyped
		// one reads as in every other command (with the near names); the
		// Builder that then fetches resolves them the same way.
		m, err := f.Mapper()
		if err != nil {
			return err
		}
		if len(args) > 0 {
			if _, err := cmdutil.ResolveTypeNameArgs(m, args); err != nil {
				return err
			}
		}
	}
	return nil
}

// Validate checks the flags without I/O.
func (o *OwnersOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	if err := o.Selection.Validate(); err != nil {
		return err
	}
	if !slices.Contains(ownersViews, o.View) {
		return exitcode.Usagef("--view %q is not supported: use one of %s", o.View, strings.Join(ownersViews, ", "))
	}
	if o.Time == "" {
		o.Time = string(ownersprint.TimeRelative)
	}
	if !slices.Contains(ownersprint.TimeFormats, ownersprint.TimeFormat(o.Time)) {
		return exitcode.Usagef("--time %q is not supported: use one of %s", o.Time, strings.Join(timeFormatNames(), ", "))
	}
	filter := managedfields.Filter{Manager: o.Manager, Shared: o.Shared}
	if o.Field != "" {
		p, err := managedfields.ParsePath(o.Field)
		if err != nil {
			return exitcode.Usage(fmt.Errorf("--field: %w; write it like .spec.replicas or .spec.template.spec.containers[name=nginx].image", err))
		}
		filter.Field = p
	}
	o.config = owners.Config{Filter: filter}
	var err error
	if o.failOn, err = owners.Findings.Parse("--fail-on", cmdutil.WithFailOnAlias(o.FailOn, o.FailOnHazard, "hazard")); err != nil {
		return err
	}
	if o.expectManagerSet && o.ExpectManager == "" {
		return exitcode.Usagef("--expect-manager needs a manager name; to expect each object's main applier, use --drift")
	}
	if o.ExpectManager != "" || o.Drift {
		o.config.Drift = &owners.DriftConfig{ExpectedManager: o.ExpectManager, IncludeStatus: o.IncludeStatus, IncludeScale: o.IncludeScale}
	} else if o.IncludeStatus {
		return exitcode.Usagef("--include-status applies to the drift check: add --expect-manager NAME or --drift")
	} else if o.IncludeScale {
		return exitcode.Usagef("--include-scale applies to the drift check: add --expect-manager NAME or --drift")
	}
	return o.validateSize()
}

// validateSize checks the flags --view size takes: it weighs whole
// objects, so the field filters and the drift check do not apply.
func (o *OwnersOptions) validateSize() error {
	if o.View != ViewSize {
		return nil
	}
	if o.Top < 0 {
		return exitcode.Usagef("--top must be 0 or positive, got %d", o.Top)
	}
	if f := o.Output.Format(); f.CI() {
		return exitcode.Usagef("-o %s reports ownership findings; --view size has none: use -o json or a table", f)
	}
	if o.Manager != "" || o.Field != "" || o.Shared || o.config.Drift != nil || o.failOn.Fails("hazard") {
		return exitcode.Usagef("--view size weighs whole objects: drop --manager, --field, --shared, --expect-manager, --drift and --fail-on hazard")
	}
	return nil
}

// Run loads the objects, has the owners engine analyze them and prints the result.
func (o *OwnersOptions) Run(ctx context.Context) error {
	if o.View == ViewSize {
		return o.runSize(ctx)
	}
	loaded, err := o.load(ctx)
	if err != nil {
		return err
	}
	if len(loaded) == 0 {
		fmt.Fprintln(o.ErrOut, "No resources found")
		return nil
	}
	cfg := o.config
	cfg.Now = o.now()
	res, err := owners.Analyze(loaded, cfg)
	if err != nil {
		return exitcode.Usage(err)
	}
	if res.NothingMatched {
		fmt.Fprintln(o.ErrOut, text.Escape(o.nothingMatched()))
	}
	if res.ClockSkew.Entries > 0 && o.Time != string(ownersprint.TimeNone) {
		fmt.Fprintln(o.ErrOut, skewNote(res.ClockSkew))
	}
	if o.config.Drift != nil {
		o.noteDrift(res.Objects)
	}
	if err := o.print(res.Objects); err != nil {
		return err
	}
	if res.DriftFields > 0 {
		return exitcode.Findingf("%s owned by a manager other than the expected one (--expect-manager, --drift)", text.Plural(res.DriftFields, "field"))
	}
	return o.failOn.Exit(owners.Findings, findings.Counts{"hazard": res.Findings})
}

// noteDrift says, on the error stream, which manager each object was
// compared with when it was inferred, and which objects have no drift or
// could not be checked.
func (o *OwnersOptions) noteDrift(objs []owners.Object) {
	clean := 0
	for _, ob := range objs {
		d := ob.Drift
		name := ob.Object.GetKind() + " " + objectName(ob.Object)
		switch {
		case d.Expected == "":
			output.Warnf(o.ErrOut, "%s has no Apply manager to expect; drift not checked: give --expect-manager NAME", name)
		case d.Inferred:
			fmt.Fprintln(o.ErrOut, text.Escape(fmt.Sprintf("note: %s: expecting its main applier %q (the Apply manager owning the most leaves: %d of %d)", name, d.Expected, d.ExpectedLeaves, d.Leaves)))
		}
		if d.StatusFields > 0 {
			fmt.Fprintln(o.ErrOut, text.Escape(fmt.Sprintf("note: %s: %s written through the status subresource left out (controllers report status there): --include-status counts them",
				name, text.Plural(d.StatusFields, "field"))))
		}
		if d.ScaleFields > 0 {
			fmt.Fprintln(o.ErrOut, text.Escape(fmt.Sprintf("note: %s: %s written through the scale subresource left out (an autoscaler or kubectl scale sets replicas there): --include-scale counts them",
				name, text.Plural(d.ScaleFields, "field"))))
		}
		if d.Expected != "" && len(d.Fields) == 0 {
			clean++
			if len(objs) == 1 {
				fmt.Fprintln(o.ErrOut, text.Escape(fmt.Sprintf("%s: no field is owned by a manager other than %q", name, d.Expected)))
			}
		}
	}
	if len(objs) > 1 && clean > 0 {
		fmt.Fprintf(o.ErrOut, "%d of %d objects have no field owned by a manager other than the expected one\n", clean, len(objs))
	}
}

// print renders the objects' ownership in the view or format asked for.
func (o *OwnersOptions) print(objs []owners.Object) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	locate := o.locate()
	if f := o.Output.Format(); f.CI() {
		return ownersprint.PrintCI(o.Out, f, objs, ownersprint.CI{Tool: cmdutil.CITool(), Fails: o.failOn.Fails, Locate: locate})
	}
	opts := ownersprint.Options{Now: o.now(), ShowSecrets: o.ShowSecrets, Color: p.Color, ObjectColumns: o.Selection.AllNamespaces, Time: ownersprint.TimeFormat(o.Time), Locate: locate}
	switch {
	case p.Structured():
		err = p.PrintObject(ownersprint.NewReport(objs, locate))
	case o.config.Drift != nil:
		err = ownersprint.Drift(p, objs, opts)
	case o.View == ViewBlame:
		err = ownersprint.Blame(o.Out, objs, opts)
	case o.View == ViewTable:
		err = ownersprint.Table(p, objs, opts)
	case o.View == ViewSummary:
		err = ownersprint.Summary(p, objs, opts)
	default:
		err = ownersprint.Tree(o.Out, objs, opts)
	}
	return err
}

// skewNote explains, once, the times shown "in 5m (clock skew)".
func skewNote(s owners.ClockSkew) string {
	return fmt.Sprintf("note: %s written up to %s after this machine's clock: the API server's clock or this one is off (clock skew); such times show as \"in %s%s\"",
		text.Plurals(s.Entries, "managedFields entry was", "managedFields entries were"), duration.HumanDuration(s.Max), duration.HumanDuration(s.Max), ownersprint.SkewNote)
}

// stdinPiped reports whether in is a pipe or a file rather than a
// terminal: then owners without arguments reads it, as if given -f -.
func stdinPiped(in io.Reader) bool {
	if in == nil {
		return false
	}
	f, ok := in.(*os.File)
	if !ok {
		return true
	}
	return !term.IsTerminal(int(f.Fd()))
}

func (o *OwnersOptions) nothingMatched() string {
	var parts []string
	if o.Manager != "" {
		parts = append(parts, fmt.Sprintf("owned by manager %q", o.Manager))
	}
	if o.Field != "" {
		parts = append(parts, fmt.Sprintf("at or below --field %s", o.Field))
	}
	if o.Shared {
		parts = append(parts, "shared by several managers")
	}
	return "no field " + strings.Join(parts, ", ") + " was found"
}

// runSize weighs the objects' managedFields as they stream in, a page at
// a time, and prints the weights.
func (o *OwnersOptions) runSize(ctx context.Context) error {
	cfg := owners.NewSizeConfig()
	cfg.Top = o.Top
	rep, err := owners.Size(ctx, cfg, o.visit)
	if err != nil {
		return err
	}
	if len(rep.Kinds) == 0 {
		fmt.Fprintln(o.ErrOut, "No resources found")
		return nil
	}
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	if p.Structured() {
		return p.PrintObject(ownersprint.NewSizeReport(rep))
	}
	return ownersprint.Size(p, rep)
}

// visit streams the selected objects to fn: from the files, or from the
// cluster page by page, degrading to what RBAC lets us read.
func (o *OwnersOptions) visit(ctx context.Context, fn func(*unstructured.Unstructured) error) error {
	if o.Selection.Offline() {
		objs, err := o.Selection.Load(ctx, nil, "", o.In)
		if err != nil {
			return err
		}
		if err := cmdutil.RejectOwnDocuments("", objs); err != nil {
			return err
		}
		for _, ob := range objs {
			if err := fn(ob.Object); err != nil {
				return exitcode.Usage(fmt.Errorf("%s: %w", ob.Source, err))
			}
		}
		return nil
	}
	seen := false
	err := o.Selection.Visit(ctx, o.getter, o.namespace, func(u *unstructured.Unstructured, _ *meta.RESTMapping) error {
		seen = true
		return fn(u)
	})
	if err != nil && seen && exitcode.IsForbidden(err) {
		output.Warnf(o.ErrOut, "weighing only the objects you may read: %v", err)
		return nil
	}
	return err
}

func (o *OwnersOptions) load(ctx context.Context) ([]objects.Object, error) {
	if o.Selection.Offline() && o.positions() {
		objs, files, err := objects.ReadFiles(ctx, o.Selection.Filenames, o.Selection.Recursive, o.In)
		if err != nil {
			return nil, exitcode.Usage(objects.WithFlag("-f", err))
		}
		dir, _ := os.Getwd()
		o.locator = cmdutil.NewLocator(files, dir)
		return objs, cmdutil.RejectOwnDocuments("", objs)
	}
	if o.Selection.Offline() {
		objs, err := o.Selection.Load(ctx, nil, "", o.In)
		if err != nil {
			return nil, err
		}
		return objs, cmdutil.RejectOwnDocuments("", objs)
	}
	var out []objects.Object
	err := o.Selection.Visit(ctx, o.getter, o.namespace, func(u *unstructured.Unstructured, _ *meta.RESTMapping) error {
		if len(u.GetManagedFields()) == 0 {
			// Not the user's input: say so and go on with the rest.
			output.Warnf(o.ErrOut, "%s %s has no managedFields; skipped", u.GetKind(), objectName(u))
			return nil
		}
		out = append(out, objects.Object{Object: u, Source: objects.Source{Item: -1}})
		return nil
	})
	if err != nil && len(out) > 0 && exitcode.IsForbidden(err) {
		// Degrade to what we may read, like kubectl get does per type.
		output.Warnf(o.ErrOut, "showing only the objects you may read: %v", err)
		return out, nil
	}
	return out, err
}

// positions reports whether the output shows where fields are written:
// the structured report, -o wide and the CI formats. The other views leave
// the files unparsed.
func (o *OwnersOptions) positions() bool {
	f := o.Output.Format()
	return f.CI() || f == output.Wide || f == output.JSON || f == output.YAML
}

// locate places the fields of the objects read with -f, or is nil.
func (o *OwnersOptions) locate() ownersprint.Locate {
	if o.locator == nil {
		return nil
	}
	return func(ob owners.Object, p fieldpath.Path) (cireport.Location, bool) {
		return o.locator.LocatePath(ob.Origin, p)
	}
}

func objectName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
