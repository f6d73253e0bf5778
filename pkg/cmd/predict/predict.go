package predict

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/predictprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// PredictOptions are the options of kubectl rv predict.
type PredictOptions struct {
	Filenames    []string
	Recursive    bool
	Patch        string
	PatchFile    string
	PatchType    string
	FieldManager string
	BaseRV       string
	BaseFile     string
	Methods      []string
	Offline      bool
	LiveFile     string
	SchemaFiles  []string
	FailOn       string
	ShowSecrets  bool
	// KubectlValidate is kubectl's --validate, for its verbs (--method
	// kubectl).
	KubectlValidate string
	Output          *cmdutil.OutputFlags
	// Rules are the API server's rules --offline runs (crd.Rules when
	// unset); rules that are not schemaRules predict no custom resource.
	Rules writepath.Rules

	args       []string
	namespace  string
	explicitNS bool
	methods    []predict.Method
	patchType  predict.PatchType
	failOn     findings.Policy
	validation string

	// locator and sources place the findings of -o github|junit|sarif
	// on the lines of the -f files; sources maps ObjectRef.Source back.
	locator *cmdutil.Locator
	sources map[string]objects.Source

	dynamic func() (dynamic.Interface, error)
	mapper  func() (meta.RESTMapper, error)
	genericiooptions.IOStreams
}

// predictLong is predict's --help.
const predictLong = `Predict, before anything is written, what each write method would do to an
object: update (PUT) with and without a resourceVersion, JSON patch, JSON
merge patch (plain and with the resourceVersion as a lock), strategic merge
patch, server-side apply with and without force; with --method kubectl,
kubectl's verbs: client-apply, server-side-apply, replace, edit and patch.

Each method gets a verdict: ok; conflict (409: a stale resourceVersion);
apply-conflict (the fields and their current owners); invalid (400/415/422);
clobber (succeeds, but overwrites or removes fields other managers own: the
silent lost update); not-found; server-error; unknown (offline: the API
server's rules for the object did not run, and why). -o wide, json and yaml
add the changed fields, ownership changes and the generation bump.

By default each method is sent as a server-side dry run (dryRun=All):
nothing is persisted, but admission webhooks see the requests. --offline
--live FILE predicts in process from the live objects with their
managedFields (kubectl get -o yaml --show-managed-fields), running the API
server's own defaulting and validation of the built-in kinds, and of custom
resources given their CRDs (--schema). Webhooks and quota are not seen then.

The manifest's resourceVersion (or --base-rv) is what the writer last read;
without one, the writer read the live object just now. Secret values are
shown as hashes unless --show-secrets is given.

Exit status: 1 when a selected method would get a 409 (--fail-on chooses
other findings, or none); 2 on bad usage or a TYPE/NAME that does not exist
(unless --type apply creates it); 3 when the cluster cannot be reached.

Docs: docs/predict.md`

// NewCmdPredict returns kubectl rv predict.
func NewCmdPredict(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PredictOptions{Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF), IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "predict (-f FILENAME | TYPE/NAME (--patch JSON | --patch-file FILE) --type json|merge|strategic|apply)",
		Short: "Predict what each write method would do: 409s, apply conflicts, silent clobbers, ownership changes",
		Long:  predictLong,
		Example: `  # Every method for a manifest, against the cluster (dry run)
  kubectl rv predict -f deploy.yaml --field-manager ci

  # Offline, in CI, from a saved live object; fail on conflicts, clobbers or invalid requests
  kubectl get deploy web -o yaml --show-managed-fields > live.yaml
  kubectl rv predict -f deploy.yaml --offline --live live.yaml --field-manager ci --fail-on any

  # Offline, a custom resource with its CRD (pruning, defaults, validation and CEL rules)
  kubectl get crd widgets.example.com -o yaml > crd.yaml
  kubectl get widget w1 -o yaml --show-managed-fields > live.yaml
  kubectl rv predict -f widget.yaml --offline --live live.yaml --schema crd.yaml --field-manager ci

  # Offline, custom resources of several CRDs: every CRD of a file, a List or a directory
  kubectl get crd -o yaml > crds.yaml
  kubectl rv predict -f config/samples --offline --live live.yaml --schema crds.yaml --field-manager ci

  # In CI: annotations at the manifest's lines (GitHub Actions); -o junit and -o sarif for reports
  kubectl rv predict -f deploy.yaml --field-manager ci -o github

  # A given JSON patch
  kubectl rv predict deployment/web --type json --patch '[{"op":"replace","path":"/spec/replicas","value":3}]'

  # Only a server-side apply without force, as JSON
  kubectl rv predict -f deploy.yaml --method apply --field-manager ci -o json

  # What kubectl apply (client side) would do: the fields it deletes, those it takes from others
  kubectl rv predict -f deploy.yaml --method client-apply -o wide

  # kubectl's verbs side by side: apply, apply --server-side, replace, edit
  kubectl rv predict -f deploy.yaml --method kubectl

  # Both server-side applies (with and without force); report without failing
  kubectl rv predict -f deploy.yaml --method all-apply --field-manager ci --fail-on none`,
		ValidArgsFunction: cmdutil.ObjectRefCompletion(f),
		RunE:              cmdutil.RunE(f, o),
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Desired objects: files, directories or - (stdin); multi-document YAML, JSON and Lists.")
	fl.BoolVarP(&o.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	fl.StringVar(&o.Patch, "patch", "", "A patch to predict for TYPE/NAME (JSON, or YAML for --type apply).")
	fl.StringVar(&o.PatchFile, "patch-file", "", "Read the patch for TYPE/NAME from this file.")
	fl.StringVar(&o.PatchType, "type", "", "The patch's type: json, merge, strategic or apply.")
	fl.StringVar(&o.FieldManager, "field-manager", "", "The writer's field manager (required for apply; other methods default to kubectl-rv, the user agent).")
	fl.StringVar(&o.BaseRV, "base-rv", "", "The resourceVersion the writer last read, a positive integer (overrides the manifest's).")
	fl.StringVar(&o.BaseFile, "base", "", "The object the writer last read, the origin of generated patches (default: the live object).")
	fl.StringSliceVar(&o.Methods, "method", []string{"all"}, "Methods to predict, comma separated: each name selects that method alone (update, update-no-rv, json-patch, merge-patch, merge-patch-rv, strategic-merge-patch, apply, apply-force; kubectl's verbs client-apply, server-side-apply, replace, edit, patch); families: all (the HTTP methods), all-update, all-merge-patch, all-apply, kubectl (kubectl's verbs).")
	fl.BoolVar(&o.Offline, "offline", false, "Predict in process from --live instead of dry runs against the cluster.")
	fl.StringVar(&o.LiveFile, "live", "", "With --offline: the live objects with their managedFields (kubectl get -o yaml --show-managed-fields).")
	fl.StringSliceVar(&o.SchemaFiles, "schema", nil, "With --offline: CustomResourceDefinitions (files, directories or -; multi-document YAML, JSON and Lists, as kubectl get crd -o yaml prints), whose custom resources are then typed, pruned, defaulted and validated as the API server does, or an OpenAPI v3 document (typing only). Repeatable.")
	fl.StringVar(&o.KubectlValidate, "validate", "strict", "kubectl's --validate for its verbs (client-apply, server-side-apply, replace, edit): strict (or true) refuses fields the kind does not declare, as kubectl does by default; warn and ignore (or false) drop them.")
	fl.BoolVar(&o.ShowSecrets, "show-secrets", false, "Show Secret values in requests and messages instead of their hashes.")
	cmdutil.AddFailOnFlag(fl, &o.FailOn, predict.Findings, predict.DefaultFailOn)
	o.Output.AddFlags(fl)
	cmdutil.SetFlagValues(fl, "method", predict.MethodNames()...)
	cmdutil.SetFlagValues(fl, "type", "json", "merge", "strategic", "apply")
	cmdutil.SetFlagValues(fl, "validate", predict.KubectlValidateValues...)
	return cmd
}

// Complete reads the namespace and wires the clients.
func (o *PredictOptions) Complete(f *cmdutil.Factory, args []string) error {
	o.args = args
	if o.Rules == nil {
		o.Rules = crd.Rules{}
	}
	if f != nil {
		ns, explicit, err := f.Namespace()
		if err != nil && !o.Offline {
			return err
		}
		if ns == "" {
			ns = "default"
		}
		o.namespace, o.explicitNS = ns, explicit
		o.dynamic = func() (dynamic.Interface, error) { return f.Dynamic(50, 100) }
		o.mapper = f.Mapper
	}
	if o.namespace == "" {
		o.namespace = "default"
	}
	return nil
}

// Validate checks the flags without I/O.
func (o *PredictOptions) Validate() error {
	if err := o.Output.Validate(); err != nil {
		return err
	}
	ms, err := predict.ParseMethods(o.Methods)
	if err != nil {
		return exitcode.Usage(fmt.Errorf("--method: %w", err))
	}
	o.methods = ms
	if o.validation, err = predict.ParseKubectlValidate(o.KubectlValidate); err != nil {
		return exitcode.Usage(fmt.Errorf("--validate: %w", err))
	}
	if o.failOn, err = predict.Findings.Parse("--fail-on", o.FailOn); err != nil {
		return err
	}
	if o.BaseRV != "" && !predict.ValidResourceVersion(o.BaseRV) {
		return exitcode.Usagef("--base-rv %q is not a resourceVersion: %s", o.BaseRV, rvHint)
	}
	patchMode := o.Patch != "" || o.PatchFile != ""
	switch {
	case len(o.Filenames) > 0 && (len(o.args) > 0 || patchMode):
		return exitcode.Usagef("give either -f FILE or TYPE/NAME with --patch, not both")
	case len(o.Filenames) == 0 && len(o.args) == 0:
		return exitcode.Usagef("say what to predict: -f FILE, or TYPE/NAME with --patch and --type")
	case len(o.args) > 0 && !patchMode:
		return exitcode.Usagef("TYPE/NAME needs --patch or --patch-file (or use -f FILE)")
	case o.Patch != "" && o.PatchFile != "":
		return exitcode.Usagef("give --patch or --patch-file, not both")
	}
	if patchMode {
		if o.PatchType == "" {
			return exitcode.Usagef("--type is required with --patch: json, merge, strategic or apply")
		}
		pt, err := predict.ParsePatchType(o.PatchType)
		if err != nil {
			return exitcode.Usage(fmt.Errorf("--type: %w", err))
		}
		o.patchType = pt
		if o.Patch != "" {
			if err := predict.ValidatePatch(pt, []byte(o.Patch)); err != nil {
				return exitcode.Usage(fmt.Errorf("--patch: %w", err))
			}
		}
		if pt == predict.PatchApply && o.FieldManager == "" {
			return exitcode.Usagef("--type apply needs --field-manager: server-side apply requires one")
		}
	} else if o.PatchType != "" {
		return exitcode.Usagef("--type only goes with --patch or --patch-file")
	}
	if onlyApply(o.methods) && o.FieldManager == "" {
		return exitcode.Usagef("--method apply needs --field-manager: server-side apply requires one")
	}
	if o.Offline && o.LiveFile == "" {
		return exitcode.Usagef("--offline needs --live FILE: the live objects with managedFields (kubectl get -o yaml --show-managed-fields)")
	}
	if !o.Offline && (o.LiveFile != "" || len(o.SchemaFiles) > 0) {
		return exitcode.Usagef("--live and --schema only work with --offline")
	}
	return nil
}

func onlyApply(ms []predict.Method) bool {
	for _, m := range ms {
		if m != predict.Apply && m != predict.ApplyForce {
			return false
		}
	}
	return len(ms) > 0
}

// Run predicts and prints.
func (o *PredictOptions) Run(ctx context.Context) error {
	p, err := o.Output.ToPrinter(o.Out)
	if err != nil {
		return err
	}
	targets, err := o.targets(ctx)
	if err != nil {
		return err
	}
	cfg := predict.Config{FieldManager: o.FieldManager, DefaultManager: "kubectl-rv", Methods: o.methods, ShowSecrets: o.ShowSecrets, KubectlValidation: o.validation}
	var results []predict.Result
	engine := "server"
	if o.Offline {
		engine = "offline"
		results, err = o.runOffline(ctx, cfg, targets)
	} else {
		results, err = o.runServer(ctx, cfg, targets)
	}
	if err != nil {
		return err
	}
	if err := o.missingNamed(results); err != nil {
		return err
	}
	rep := predictprint.NewReport(engine, results)
	if f := o.Output.Format(); f.CI() {
		err = predictprint.PrintCI(o.Out, o.ErrOut, f, rep, o.ci())
	} else {
		err = predictprint.Print(p, o.ErrOut, rep)
	}
	if err != nil {
		return err
	}
	return o.failOn.Exit(predict.Findings, predict.Counts(results))
}

// ci says how the report becomes a CI report: the findings --fail-on
// fails on are errors, and each is placed on the line of the -f file
// its object was read from.
func (o *PredictOptions) ci() predictprint.CI {
	return predictprint.CI{
		Tool:  cmdutil.CITool(),
		Fails: o.failOn.Fails,
		Locate: func(ref predict.ObjectRef, field string) cireport.Location {
			src, ok := o.sources[ref.Source]
			if !ok || o.locator == nil {
				return cireport.Location{}
			}
			return o.locator.Locate(src, field)
		},
	}
}

// missingNamed returns the usage error of an object named on the command
// line (TYPE/NAME with a patch) that does not exist: no method could find
// it (an apply would have created it), so there is nothing to predict
// (docs/exit-codes.md: a missing named object exits 2).
func (o *PredictOptions) missingNamed(results []predict.Result) error {
	if len(o.args) != 1 || len(results) != 1 || results[0].LiveResourceVersion != "" {
		return nil
	}
	for _, m := range results[0].Methods {
		if m.Verdict != predict.NotFound {
			return nil
		}
	}
	return exitcode.Usagef("%s: %s does not exist: a %s patch has nothing to patch (--type apply would create it)",
		text.Escape(o.args[0]), text.Escape(results[0].Object.String()), o.PatchType)
}

// targets reads the desired objects or the patch.
func (o *PredictOptions) targets(ctx context.Context) ([]predict.Target, error) {
	var base *unstructured.Unstructured
	if o.BaseFile != "" {
		objs, err := objects.Read(ctx, []string{o.BaseFile}, false, o.In)
		if err != nil {
			return nil, exitcode.Usage(fmt.Errorf("--base %w", err))
		}
		if err := cmdutil.RejectOwnDocuments("--base ", objs); err != nil {
			return nil, err
		}
		if len(objs) != 1 {
			return nil, exitcode.Usagef("--base %s: want one object, found %d", o.BaseFile, len(objs))
		}
		base = objs[0].Object
		if err := checkObjectRV(base, "--base "+objs[0].Source.String()); err != nil && o.BaseRV == "" {
			return nil, err
		}
	}
	if len(o.Filenames) > 0 {
		objs, err := o.readDesired(ctx)
		if err != nil {
			return nil, exitcode.Usage(objects.WithFlag("-f", err))
		}
		if err := cmdutil.RejectOwnDocuments("", objs); err != nil {
			return nil, err
		}
		if base != nil && len(objs) > 1 {
			return nil, exitcode.Usagef("--base works with one desired object, -f gave %d", len(objs))
		}
		targets := make([]predict.Target, 0, len(objs))
		for _, ob := range objs {
			u := ob.Object
			gvk := u.GroupVersionKind()
			if gvk.Kind == "" || gvk.Version == "" || u.GetName() == "" {
				return nil, exitcode.Usagef("%s: the object needs apiVersion, kind and metadata.name", ob.Source)
			}
			if err := checkObjectRV(u, ob.Source.String()); err != nil && o.BaseRV == "" {
				return nil, err
			}
			ref := predict.ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Source: ob.Source.String()}
			targets = append(targets, predict.Target{GVK: gvk, Input: predict.Input{Ref: ref, Desired: u, Base: base, BaseRV: o.BaseRV}})
		}
		return targets, nil
	}
	data := []byte(o.Patch)
	if o.PatchFile != "" {
		var err error
		if data, err = input.ReadFile(ctx, o.PatchFile, o.In); err != nil {
			return nil, exitcode.Usage(fmt.Errorf("--patch-file: %w", err))
		}
		if err := predict.ValidatePatch(o.patchType, data); err != nil {
			return nil, exitcode.Usage(fmt.Errorf("--patch-file %s: %w", o.PatchFile, err))
		}
	}
	if len(o.args) != 1 {
		return nil, exitcode.Usagef("a patch needs exactly one TYPE/NAME argument, got %d", len(o.args))
	}
	on, err := apitypes.ParseObjectName(o.args[0])
	if err != nil {
		return nil, exitcode.Usagef("argument %w", err)
	}
	ref := predict.ObjectRef{Kind: on.Type, Namespace: on.Namespace, Name: on.Name}
	return []predict.Target{{Input: predict.Input{Ref: ref, Patch: data, PatchType: o.patchType, Base: base, BaseRV: o.BaseRV}}}, nil
}

// readDesired reads the -f objects; for a CI format it keeps the files'
// bytes too, to place findings on their lines.
func (o *PredictOptions) readDesired(ctx context.Context) ([]objects.Object, error) {
	if !o.Output.Format().CI() {
		return objects.Read(ctx, o.Filenames, o.Recursive, o.In)
	}
	objs, files, err := objects.ReadFiles(ctx, o.Filenames, o.Recursive, o.In)
	if err != nil {
		return nil, err
	}
	dir, _ := os.Getwd()
	o.locator = cmdutil.NewLocator(files, dir)
	o.sources = make(map[string]objects.Source, len(objs))
	for _, ob := range objs {
		o.sources[ob.Source.String()] = ob.Source
	}
	return objs, nil
}

// rvHint says what a resourceVersion looks like, for the messages that
// reject one.
const rvHint = "use the positive integer from an object's metadata.resourceVersion"

// checkObjectRV rejects a resourceVersion in a file that no API server
// handed out (a server answers such a precondition with a 500 carrying Go's
// strconv error). An empty one is fine: the writer then read nothing.
func checkObjectRV(u *unstructured.Unstructured, where string) error {
	rv := u.GetResourceVersion()
	if rv == "" || predict.ValidResourceVersion(rv) {
		return nil
	}
	return exitcode.Usagef("%s: metadata.resourceVersion %q is not a resourceVersion: %s, or remove it", where, rv, rvHint)
}

func (o *PredictOptions) runServer(ctx context.Context, cfg predict.Config, targets []predict.Target) ([]predict.Result, error) {
	mapper, err := o.mapper()
	if err != nil {
		return nil, err
	}
	dyn, err := o.dynamic()
	if err != nil {
		return nil, exitcode.Cluster(err)
	}
	items, err := predict.MatchCluster(targets, o.defaultNamespace(), predictCluster{mapper: mapper, dyn: dyn})
	if err != nil {
		var nsErr *predict.NamespaceError
		var classified *exitcode.Error
		switch {
		case errors.As(err, &nsErr):
			return nil, exitcode.Usage(err)
		case errors.As(err, &classified):
			return nil, err
		case exitcode.Classify(err) == exitcode.CodeCluster:
			return nil, exitcode.Cluster(err)
		}
		return nil, exitcode.Usage(err)
	}
	out, err := predict.PredictEach(ctx, cfg, items)
	var ie *predict.ItemError
	if errors.As(err, &ie) {
		return nil, classifyPredictErr(predict.Target{Input: items[ie.Index].Input}, ie.Err)
	}
	return out, err
}

// predictCluster is predict's view of the cluster: the REST mapper and the
// dynamic client, with the errors that are the cluster's marked so.
type predictCluster struct {
	mapper meta.RESTMapper
	dyn    dynamic.Interface
}

func (c predictCluster) KindFor(typ string) (schema.GroupVersionKind, error) {
	return kindFor(c.mapper, typ)
}

func (c predictCluster) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && !meta.IsNoMatchError(err) {
		return nil, exitcode.Cluster(err)
	}
	return m, err
}

func (c predictCluster) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return c.dyn.Resource(gvr)
}

func (o *PredictOptions) defaultNamespace() predict.DefaultNamespace {
	return predict.DefaultNamespace{Name: o.namespace, Explicit: o.explicitNS}
}

func where(j predict.Target) string { return j.Where() }

// classifyPredictErr marks a prediction's error with its exit code, after
// the object it is about. A 403 gets the one permission hint
// (exitcode.Refused): a dry run is authorized as the write it predicts, so
// a user who may only read predicts offline instead.
func classifyPredictErr(j predict.Target, err error) error {
	if exitcode.IsForbidden(err) {
		need := fmt.Sprintf("get, and the verbs of the writes predicted (a dry run is authorized as the write itself), on %s; without them, predict --offline --live FILE", refusedOn(err, j.Input.Ref.Namespace))
		return exitcode.Refused(err, where(j), "one of predict's requests", need)
	}
	if exitcode.Classify(err) == exitcode.CodeCluster {
		return exitcode.Cluster(fmt.Errorf("%s: %w", where(j), err))
	}
	return exitcode.Usage(fmt.Errorf("%s: %w", where(j), err))
}

// refusedOn names what a 403 refused, from the server's status: the
// resource of the object's type, in the object's namespace.
func refusedOn(err error, namespace string) string {
	on := "the object's resource"
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		if d := st.Status().Details; d != nil && d.Kind != "" {
			on = text.Escape(schema.GroupResource{Group: d.Group, Resource: d.Kind}.String())
		}
	}
	if namespace != "" {
		on += " in namespace " + text.Escape(namespace)
	}
	return on
}

func kindFor(mapper meta.RESTMapper, typ string) (schema.GroupVersionKind, error) {
	m, err := cmdutil.ResolveType(mapper, typ)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return m.GroupVersionKind, nil
}

func (o *PredictOptions) runOffline(ctx context.Context, cfg predict.Config, targets []predict.Target) ([]predict.Result, error) {
	tc, rules, err := o.readSchema(ctx)
	if err != nil {
		return nil, err
	}
	cfg.TypeConverter = tc
	lives, sources, err := o.readLive(ctx)
	if err != nil {
		return nil, err
	}
	off := predict.NewOffline(tc)
	off.Rules = rules
	items, err := predict.MatchOffline(targets, predict.NewLiveSet(lives, liveKinds(lives)), o.defaultNamespace(), off.Namespaced, off.Executor)
	if err != nil {
		var nl *predict.NoLiveObjectError
		var ve *predict.VersionError
		switch {
		case errors.As(err, &nl):
			return nil, exitcode.Usagef("--live %s holds no %s", o.LiveFile, nl.Type+"/"+nl.Name)
		case errors.As(err, &ve):
			// Either file may be the one to fix: name both.
			return nil, exitcode.Usagef("%s: the manifest is %s, its live object (--live %s) %s: offline prediction cannot convert between versions; save both in one version",
				ve.Where, gvkString(ve.Manifest), sources[ve.Live], gvkString(ve.Live.GroupVersionKind()))
		}
		return nil, exitcode.Usage(err)
	}
	out, err := predict.PredictAll(ctx, cfg, items, 0)
	if err != nil {
		var ie *predict.ItemError
		if errors.As(err, &ie) {
			return nil, exitcode.Usage(fmt.Errorf("%s: %w", where(targets[ie.Index]), ie.Err))
		}
		return nil, exitcode.Usage(err)
	}
	return out, nil
}

// schemaRules are offline rules that can run the server's rules for the
// custom resources of a --schema document (crd.Rules).
type schemaRules interface {
	WithSchemas(schemas ...[]byte) (writepath.Rules, error)
}

// gvkString names a kind as a manifest does: apps/v1 Deployment.
func gvkString(gvk schema.GroupVersionKind) string {
	return text.Escape(gvk.GroupVersion().String() + " " + gvk.Kind)
}

// readLive reads the --live objects; each must have valid managedFields.
// It returns where each was read, for messages.
func (o *PredictOptions) readLive(ctx context.Context) ([]*unstructured.Unstructured, map[*unstructured.Unstructured]string, error) {
	lives, err := objects.Read(ctx, []string{o.LiveFile}, false, o.In)
	if err != nil {
		return nil, nil, exitcode.Usage(fmt.Errorf("--live %w", err))
	}
	if err := cmdutil.RejectOwnDocuments("--live ", lives); err != nil {
		return nil, nil, err
	}
	sources := make(map[*unstructured.Unstructured]string, len(lives))
	out := make([]*unstructured.Unstructured, 0, len(lives))
	for _, l := range lives {
		u := l.Object
		if _, err := managedfields.Entries(u); err != nil {
			return nil, nil, exitcode.Usage(fmt.Errorf("--live %s: %s %s: %w", l.Source, text.Escape(u.GetKind()), text.Escape(u.GetName()), err))
		}
		if err := checkObjectRV(u, "--live "+l.Source.String()); err != nil {
			return nil, nil, err
		}
		out = append(out, u)
		sources[u] = l.Source.String()
	}
	return out, sources, nil
}

// liveKinds resolves a patch's TYPE the way it is resolved against a
// cluster, by the one resolver, over the kinds the --live objects have
// (deployment, deployments, Deployment, deployments.apps; deploy is not
// guessed, since no discovery names short forms).
func liveKinds(lives []*unstructured.Unstructured) predict.KindResolver {
	mapper := cmdutil.OfflineMapper(lives)
	return func(typ string) (schema.GroupKind, error) {
		m, err := cmdutil.ResolveType(mapper, typ)
		if err != nil {
			// The live objects' mapper knows plurals and kinds only: a
			// built-in type's short name or singular (deploy) is the
			// offline table's.
			group, resource, ok := apitypes.ParseOfflineType(typ).Builtin()
			if !ok {
				return schema.GroupKind{}, err
			}
			if group != "" {
				resource += "." + group
			}
			if m, err = cmdutil.ResolveType(mapper, resource); err != nil {
				return schema.GroupKind{}, err
			}
		}
		return m.GroupVersionKind.GroupKind(), nil
	}
}
