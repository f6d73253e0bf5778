package cmdutil

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// completionTimeout bounds the API calls of one completion: a shell waiting
// on TAB should give up on a slow cluster rather than hang.
const completionTimeout = 5 * time.Second

// ResourceTypeOrNameCompletion returns a ValidArgsFunction for commands that
// take kubectl's TYPE [NAME...] or TYPE/NAME... arguments, completing like
// kubectl get: resource types from the cluster's discovery for the first
// argument (TYPE[,TYPE...] included), object names of that type for the
// following ones, and TYPE/NAME once the word holds a slash. Names come from
// -n (or the context's namespace), or every namespace with -A. Names already
// on the command line are not offered again.
//
//	cmd.ValidArgsFunction = ResourceTypeOrNameCompletion(f)
func ResourceTypeOrNameCompletion(f *Factory) cobra.CompletionFunc {
	return typeOrNameCompletion(f, true)
}

// SingleObjectCompletion is ResourceTypeOrNameCompletion for commands that
// take exactly one object (TYPE NAME or TYPE/NAME): nothing more is offered
// once the object is named.
func SingleObjectCompletion(f *Factory) cobra.CompletionFunc {
	return typeOrNameCompletion(f, false)
}

// ObjectRefCompletion returns a ValidArgsFunction for commands that take
// one object as TYPE/NAME only (not TYPE NAME): resource types followed by a
// slash, then the names of that type.
func ObjectRefCompletion(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if slash := strings.Index(toComplete, "/"); slash >= 0 {
			var comps []string
			for _, n := range objectNames(cmd, f, toComplete[:slash], toComplete[slash+1:]) {
				comps = append(comps, toComplete[:slash+1]+n)
			}
			return comps, cobra.ShellCompDirectiveNoFileComp
		}
		var comps []string
		for _, t := range completeTypes(cmd, f, toComplete) {
			comps = append(comps, t+"/")
		}
		return comps, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// ResourceTypeCompletion returns a ValidArgsFunction for commands whose
// only argument is TYPE[,TYPE...]: resource types as kubectl api-resources
// -o name prints them (pods, deployments.apps), after any comma-separated
// types already typed. Nothing is offered once the argument is given.
func ResourceTypeCompletion(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeTypes(cmd, f, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// ResourceNameCompletion returns a completion of the names of objects of
// one resource type (such as "deployments.apps" or "deploy"), for flags and
// arguments that name an object of a fixed type.
func ResourceNameCompletion(f *Factory, resourceType string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return objectNames(cmd, f, resourceType, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// RegisterGlobalFlagCompletion completes the values of kubectl's global
// flags on root, as kubectl does: --namespace from the cluster, --context,
// --cluster and --user from the kubeconfig. Flags root does not have are
// skipped.
func RegisterGlobalFlagCompletion(root *cobra.Command, f *Factory) {
	register := func(flag string, fn cobra.CompletionFunc) {
		if root.Flag(flag) != nil {
			_ = root.RegisterFlagCompletionFunc(flag, fn)
		}
	}
	register("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return objectNames(cmd, f, "namespaces", toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	fromKubeconfig := func(names func(contexts, clusters, users []string) []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cfg, err := f.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var contexts, clusters, users []string
			for n := range cfg.Contexts {
				contexts = append(contexts, n)
			}
			for n := range cfg.Clusters {
				clusters = append(clusters, n)
			}
			for n := range cfg.AuthInfos {
				users = append(users, n)
			}
			return withPrefix(names(contexts, clusters, users), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	register("context", fromKubeconfig(func(c, _, _ []string) []string { return c }))
	register("cluster", fromKubeconfig(func(_, c, _ []string) []string { return c }))
	register("user", fromKubeconfig(func(_, _, u []string) []string { return u }))
}

// registerFlagValueCompletion completes, on c and its subcommands, the
// values of every flag that lists them (setFlagValues): -o, --color,
// owners --view, predict --method, --type and --fail-on, ...
// It visits each command's own flags (c.Flags, before cobra merges the
// persistent ones in): LocalNonPersistentFlags would copy kubectl's global
// flags into every command on every start, for flags that list no values.
func RegisterFlagValueCompletion(c *cobra.Command) {
	c.Flags().VisitAll(func(fl *pflag.Flag) {
		if values := fl.Annotations[AnnotationValues]; len(values) > 0 {
			_ = c.RegisterFlagCompletionFunc(fl.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
	})
	for _, sub := range c.Commands() {
		RegisterFlagValueCompletion(sub)
	}
}

// builtinScenarioCompletion completes simulate run --builtin with the
// built-in scenarios, each with its description.
func BuiltinScenarioCompletion(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var comps []cobra.Completion
	for _, b := range scenario.Builtins() {
		desc, _, _ := strings.Cut(b.Description, ". ")
		comps = append(comps, b.Name+"\t"+desc)
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}

// lagTypeCompletion completes lag's TYPE[,TYPE...] with the types lag can
// check (those whose objects can report an observedGeneration), cluster-
// scoped ones included, since -A may follow.
func LagTypeCompletion(f *Factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		d, err := f.Discovery()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		targets, _, _ := lag.Discover(d, true)
		names := make([]string, 0, len(targets))
		for _, t := range targets {
			names = append(names, t.Name())
		}
		sort.Strings(names)
		return typesAfterCommas(toComplete, names), cobra.ShellCompDirectiveNoFileComp
	}
}

func typeOrNameCompletion(f *Factory, allowRepeat bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		directive := cobra.ShellCompDirectiveNoFileComp
		var comps []string
		switch slash := strings.Index(toComplete, "/"); {
		case len(args) > 0 && !strings.Contains(args[0], "/"):
			// TYPE NAME...: every further word is a name of that type.
			if allowRepeat || len(args) == 1 {
				comps = without(objectNames(cmd, f, args[0], toComplete), args[1:])
			}
		case slash >= 0:
			// TYPE/NA<TAB>: the type is known, complete the name.
			if allowRepeat || len(args) == 0 {
				typ := toComplete[:slash]
				for _, n := range objectNames(cmd, f, typ, toComplete[slash+1:]) {
					comps = append(comps, typ+"/"+n)
				}
				comps = without(comps, args)
			}
		case len(args) == 0:
			comps = completeTypes(cmd, f, toComplete)
		case allowRepeat:
			// After a TYPE/NAME word, every word is TYPE/NAME: offer "TYPE/"
			// and let the user go on typing the name.
			for _, t := range completeTypes(cmd, f, toComplete) {
				comps = append(comps, t+"/")
			}
			directive |= cobra.ShellCompDirectiveNoSpace
		}
		return comps, directive
	}
}

// completeTypes offers resource types after the comma-separated ones already
// in toComplete ("pods,depl" -> "pods,deployments.apps").
func completeTypes(cmd *cobra.Command, f *Factory, toComplete string) []string {
	return typesAfterCommas(toComplete, resourceTypes(cmd, f))
}

// typesAfterCommas offers the types that complete the last of the
// comma-separated ones in toComplete.
func typesAfterCommas(toComplete string, types []string) []string {
	prefix, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix, last = toComplete[:i+1], toComplete[i+1:]
	}
	var comps []string
	for _, t := range withPrefix(types, last) {
		comps = append(comps, prefix+t)
	}
	return comps
}

// resourceTypes lists the cluster's resource types that can be read, named
// as kubectl api-resources -o name names them: the plural, followed by the
// group for non-core types (deployments.apps).
func resourceTypes(cmd *cobra.Command, f *Factory) []string {
	d, err := f.Discovery()
	if err != nil {
		cobra.CompDebugln(fmt.Sprintf("discovery: %v", err), true)
		return nil
	}
	// A failing aggregated API still leaves the others usable.
	lists, err := d.ServerPreferredResources()
	if err != nil {
		cobra.CompDebugln(fmt.Sprintf("discovery: %v", err), true)
	}
	var names []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "get") {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// objectNames lists the names of the objects of resourceType (a plural,
// singular, short name or TYPE.GROUP) that start with toComplete, in the
// command's namespace, or in all of them with -A.
func objectNames(cmd *cobra.Command, f *Factory, resourceType, toComplete string) []string {
	ctx := context.Background()
	if cmd != nil && cmd.Context() != nil {
		ctx = cmd.Context()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()

	mapping, err := restMapping(f, resourceType)
	if err != nil {
		cobra.CompDebugln(fmt.Sprintf("resource type %q: %v", resourceType, err), true)
		return nil
	}
	dyn, err := f.Dynamic(0, 0)
	if err != nil {
		return nil
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace && !AllNamespaces(cmd) {
		ns, _, err := f.Namespace()
		if err != nil {
			return nil
		}
		ri = dyn.Resource(mapping.Resource).Namespace(ns)
	}
	var names []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			cobra.CompDebugln(fmt.Sprintf("listing %s: %v", mapping.Resource.Resource, err), true)
			return nil
		}
		for _, it := range l.Items {
			if strings.HasPrefix(it.GetName(), toComplete) {
				names = append(names, it.GetName())
			}
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			break
		}
	}
	sort.Strings(names)
	// With -A the same name can live in several namespaces.
	return slices.Compact(names)
}

func restMapping(f *Factory, resourceType string) (*meta.RESTMapping, error) {
	m, err := f.Mapper()
	if err != nil {
		return nil, err
	}
	return ResolveType(m, resourceType)
}

// allNamespaces reports whether the command was given -A/--all-namespaces.
func AllNamespaces(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	fl := cmd.Flags().Lookup("all-namespaces")
	return fl != nil && fl.Value.String() == "true"
}

func withPrefix(candidates []string, prefix string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

func without(candidates, present []string) []string {
	var out []string
	for _, c := range candidates {
		if !slices.Contains(present, c) {
			out = append(out, c)
		}
	}
	return out
}
