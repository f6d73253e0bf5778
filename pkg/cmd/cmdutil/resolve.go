package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// This file is the one place where a resource type named on the command
// line becomes a REST mapping, for every command: watch, lag and predict
// here, owners through objects.Selection, which uses the same
// resource.Builder to fetch what it resolves.

// resolveType returns the REST mapping of one resource type as typed on the
// command line (deployments, deployment, deploy, Deployment,
// deployments.apps, deployments.v1.apps), resolved by cli-runtime's
// resource.Builder the way kubectl get resolves it: first as a resource,
// then as a kind. Nothing is fetched; mapper may do discovery.
//
// An unknown type is a usage error naming it; a failure to reach the
// cluster keeps its error, for exitcode.Classify.
func ResolveType(mapper meta.RESTMapper, typ string) (*meta.RESTMapping, error) {
	// The Builder is asked for mappings only: it never gets to build a
	// client, so it needs none, and category expansion (kubectl get all)
	// is no type.
	noClient := func(schema.GroupVersion) (resource.RESTClient, error) { return nil, nil }
	noCategories := func() (restmapper.CategoryExpander, error) { return restmapper.SimpleCategoryExpander{}, nil }
	b := resource.NewFakeBuilder(noClient, func() (meta.RESTMapper, error) { return mapper, nil }, noCategories)
	m, err := b.Unstructured().ResourceTypeOrNameArgs(true, typ).Do().ResourceMapping()
	switch {
	case err == nil:
		return m, nil
	case exitcode.Classify(err) == exitcode.CodeCluster:
		return nil, fmt.Errorf("resolving type %q: %w", typ, err)
	}
	return nil, exitcode.Usage(&unknownTypeError{typ: typ})
}

// unknownTypeError is a resource type that names no served resource.
// Factory.decorate fills near from discovery, the way cobra suggests
// commands ("did you mean this?") for a mistyped command.
type unknownTypeError struct {
	typ  string
	near []string
}

func (e *unknownTypeError) Error() string {
	if len(e.near) == 0 {
		return fmt.Sprintf("unknown resource type %q: list the served types with kubectl api-resources", e.typ)
	}
	return fmt.Sprintf("unknown resource type %q: did you mean %s? (kubectl api-resources lists the served types)", e.typ, strings.Join(e.near, " or "))
}

// maxTypeSuggestions caps the near names an unknown type gets.
const maxTypeSuggestions = 3

// nearTypes returns the resources (by plural name, group-qualified when
// not core) with a name, singular name, short name or kind within cobra's
// suggestion distance of typ (2 edits, case-insensitive, fewer than half
// of typ's letters) or that typ begins, nearest first.
func nearTypes(typ string, lists []*metav1.APIResourceList) []string {
	typ = strings.ToLower(typ)
	best := map[string]int{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			name := schema.GroupResource{Group: gv.Group, Resource: r.Name}.String()
			for _, cand := range append([]string{r.Name, r.SingularName, strings.ToLower(r.Kind), name}, r.ShortNames...) {
				d := levenshtein(typ, strings.ToLower(cand))
				// Two edits of a three-letter word reach half the short
				// names: an edit must be less than half the word.
				near := d <= 2 && 2*d < len(typ)
				if cand == "" || !near && !strings.HasPrefix(strings.ToLower(cand), typ) {
					continue
				}
				if old, ok := best[name]; !ok || d < old {
					best[name] = d
				}
			}
		}
	}
	out := make([]string, 0, len(best))
	for name := range best {
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := best[a] - best[b]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out[:min(len(out), maxTypeSuggestions)]
}

// levenshtein is the edit distance of a and b, as cobra computes it for
// its command suggestions.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// typeArg is one TYPE of kubectl's resource arguments and the names given
// with it (none: every object of the type).
type typeArg struct {
	typ   string
	names []string
}

// parseTypeNameArgs splits kubectl's resource arguments, TYPE[,TYPE...]
// [NAME...] or TYPE/NAME..., into types and names.
func parseTypeNameArgs(args []string) ([]typeArg, error) {
	if len(args) == 0 {
		return nil, nil
	}
	var out []typeArg
	if strings.Contains(args[0], "/") {
		for _, a := range args {
			on, err := apitypes.ParseObjectName(a)
			switch {
			case !strings.Contains(a, "/"):
				return nil, exitcode.Usagef("argument %q: when one argument is TYPE/NAME, all must be (or use TYPE NAME...)", a)
			case err != nil:
				return nil, exitcode.Usagef("argument %w", err)
			case on.Namespace != "":
				// As kubectl get: the namespace is -n's.
				return nil, exitcode.Usagef("argument %q: give TYPE/NAME and the namespace with -n %s", a, on.Namespace)
			}
			out = append(out, typeArg{typ: on.Type, names: []string{on.Name}})
		}
		return out, nil
	}
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			return nil, exitcode.Usagef("argument %q: empty resource type", args[0])
		}
		out = append(out, typeArg{typ: typ, names: args[1:]})
	}
	return out, nil
}

// resolvedType is a resource named on the command line and the names asked
// of it (none: every object).
type ResolvedType struct {
	Mapping *meta.RESTMapping
	Names   []string
}

// resolveTypeNameArgs parses kubectl's resource arguments and resolves
// their types, in the order given. Types that name the same resource are
// merged: deploy/a deployments/b is one resource with names a and b, and
// one that asks for every object absorbs the names of the others.
func ResolveTypeNameArgs(mapper meta.RESTMapper, args []string) ([]ResolvedType, error) {
	parsed, err := parseTypeNameArgs(args)
	if err != nil {
		return nil, err
	}
	var out []ResolvedType
	index := map[schema.GroupVersionResource]int{}
	for _, p := range parsed {
		m, err := ResolveType(mapper, p.typ)
		if err != nil {
			return nil, err
		}
		i, ok := index[m.Resource]
		if !ok {
			out = append(out, ResolvedType{Mapping: m})
			i = len(out) - 1
			index[m.Resource] = i
		} else if len(out[i].Names) == 0 || len(p.names) == 0 {
			out[i].Names = nil
			continue
		}
		for _, n := range p.names {
			if !slices.Contains(out[i].Names, n) {
				out[i].Names = append(out[i].Names, n)
			}
		}
	}
	return out, nil
}

// offlineMapper is a REST mapper of the kinds of objects read from files,
// so that types name them offline as they would name them in a cluster
// (deployments, deployment, Deployment, deployments.apps), except short
// names, which only discovery knows. The first version seen of a kind is
// the one it maps to.
func OfflineMapper(objs []*unstructured.Unstructured) meta.RESTMapper {
	var gvs []schema.GroupVersion
	var kinds []schema.GroupVersionKind
	seen := map[schema.GroupKind]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if gvk.Kind == "" || seen[gvk.GroupKind()] {
			continue
		}
		seen[gvk.GroupKind()] = true
		kinds = append(kinds, gvk)
		if !slices.Contains(gvs, gvk.GroupVersion()) {
			gvs = append(gvs, gvk.GroupVersion())
		}
	}
	m := meta.NewDefaultRESTMapper(gvs)
	for _, gvk := range kinds {
		m.Add(gvk, meta.RESTScopeNamespace)
	}
	return m
}

// typeListArgs splits TYPE[,TYPE...] arguments.
func TypeListArgs(args []string) []string {
	var out []string
	for _, a := range args {
		out = append(out, strings.Split(a, ",")...)
	}
	return out
}

// checkTypeList refuses an empty type or a TYPE/NAME among the
// TYPE[,TYPE...] arguments of a command that works on whole types; what
// says what it does with them ("churn watches").
func CheckTypeList(args []string, what string) error {
	for _, a := range TypeListArgs(args) {
		switch {
		case strings.TrimSpace(a) == "":
			return exitcode.Usagef("empty resource type in %q: give TYPE[,TYPE...]", strings.Join(args, " "))
		case strings.Contains(a, "/"):
			return exitcode.Usagef("%q: %s resource types, not objects: give TYPE[,TYPE...]", a, what)
		}
	}
	return nil
}

// resolveAPITypes returns the types a command that works across types
// (doctor, churn) covers: the TYPE arguments, resolved by resolveType, or
// with none every listable and watchable type discovery finds
// (cluster-scoped ones only when clusterScoped is set).
func ResolveAPITypes(f *Factory, args []string, clusterScoped bool) (apitypes.Discovered, error) {
	if len(args) == 0 {
		d, err := f.Discovery()
		if err != nil {
			return apitypes.Discovered{}, err
		}
		// The user named no type: the server's deprecation warnings for
		// the types listed anyway are summarised, not printed each.
		f.warnings.onlyFor(nil, false)
		return apitypes.Listable(d, clusterScoped)
	}
	m, err := f.Mapper()
	if err != nil {
		return apitypes.Discovered{}, err
	}
	var out apitypes.Discovered
	for _, typ := range TypeListArgs(args) {
		mapping, err := ResolveType(m, typ)
		if err != nil {
			return apitypes.Discovered{}, err
		}
		t := apitypes.Type{Resource: mapping.Resource, Kind: mapping.GroupVersionKind.Kind, Namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}
		if !slices.Contains(out.Types, t) {
			out.Types = append(out.Types, t)
		}
	}
	return out, nil
}
