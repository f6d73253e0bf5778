package apitypes

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// BuiltinType is one resource type of a built-in API group, as discovery
// names it.
type BuiltinType struct {
	Group, Version, Resource, Singular, Kind string
	ShortNames                               []string
	Namespaced                               bool
}

// BuiltinTypes returns the resource types of the built-in API groups of
// the Kubernetes version kubectl-rv is built for (a copy).
func BuiltinTypes() []BuiltinType { return slices.Clone(builtinTypes) }

// names reports whether word names t: its plural, singular, kind or a
// short name, lower-cased.
func (t BuiltinType) names(word string) bool {
	return word == t.Resource || word == t.Singular || word == strings.ToLower(t.Kind) || slices.Contains(t.ShortNames, word)
}

// OfflineType is a resource type a user named where no cluster is asked
// (an audit log, a recording), resolved with kubectl's rules: see
// ParseOfflineType.
type OfflineType struct {
	// group and resource are the built-in type's, when the name is one.
	group, resource string
	builtin         bool
	// Otherwise (a custom resource): the word and what followed its first
	// dot, a group or version.group ("" when none).
	word, rest string
}

// ParseOfflineType resolves TYPE as kubectl does, without discovery: the
// plural, the singular, the kind or a short name, each optionally followed
// by .GROUP or .VERSION.GROUP (deploy, deployments, Deployment,
// deployments.apps, deployment.v1.apps). A built-in type resolves to its
// group and resource (the first in discovery's order when two groups share
// the name, as events: the core group's, as in kubectl). Any other name is
// taken as a custom resource's plural or singular (gadgets, gadget), in
// the group given if one is.
func ParseOfflineType(typ string) OfflineType {
	word, rest, _ := strings.Cut(strings.ToLower(typ), ".")
	for _, t := range builtinTypes {
		if t.names(word) && (rest == "" || rest == t.Group || rest == t.Version+"."+t.Group || t.Group == "" && rest == t.Version) {
			return OfflineType{group: t.Group, resource: t.Resource, builtin: true}
		}
	}
	return OfflineType{word: word, rest: rest}
}

// Builtin returns the built-in type's group and plural resource, when the
// name is one's.
func (o OfflineType) Builtin() (group, resource string, ok bool) {
	return o.group, o.resource, o.builtin
}

// Matches reports whether a request's group and resource (plural, as in
// audit events and watch recordings) are of this type.
func (o OfflineType) Matches(group, resource string) bool {
	if o.builtin {
		return group == o.group && resource == o.resource
	}
	if o.rest != "" && o.rest != group && !strings.HasSuffix(o.rest, "."+group) {
		return false
	}
	w := o.word
	return resource == w || resource == w+"s" || resource == w+"es" ||
		strings.HasSuffix(w, "y") && resource == strings.TrimSuffix(w, "y")+"ies"
}

// ResourceFilter is --resource: which types a command keeps, from
// patterns as kubectl-dev_tool audit takes them. A pattern is a type as
// ParseOfflineType reads it (cm, deployments.apps), or a glob over
// RESOURCE.GROUP (the core group's types end in a dot: configmaps.) with *
// and ?: *.apps, *.* (everything); a leading - excludes what it matches.
// A type is kept when no inclusion is given or one matches, and no
// exclusion matches.
type ResourceFilter struct {
	include, exclude []resourcePattern
}

type resourcePattern struct {
	glob string
	typ  OfflineType
}

func (p resourcePattern) matches(group, resource string) bool {
	if p.glob != "" {
		ok, _ := path.Match(p.glob, resource+"."+group)
		return ok
	}
	return p.typ.Matches(group, resource)
}

// ParseResourceFilter compiles the patterns; a malformed glob is an error
// naming it.
func ParseResourceFilter(patterns []string) (*ResourceFilter, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	f := &ResourceFilter{}
	for _, s := range patterns {
		neg := strings.HasPrefix(s, "-")
		body := strings.TrimPrefix(s, "-")
		if body == "" {
			return nil, fmt.Errorf("%q: give a type or a pattern, e.g. configmaps, *.apps or -leases.coordination.k8s.io", s)
		}
		p := resourcePattern{}
		if strings.ContainsAny(body, "*?[") {
			if _, err := path.Match(body, ""); err != nil {
				return nil, fmt.Errorf("%q: %w", s, err)
			}
			p.glob = strings.ToLower(body)
		} else {
			p.typ = ParseOfflineType(body)
		}
		if neg {
			f.exclude = append(f.exclude, p)
		} else {
			f.include = append(f.include, p)
		}
	}
	return f, nil
}

// Keeps reports whether a request's group and (plural) resource pass f; a
// nil filter keeps everything.
func (f *ResourceFilter) Keeps(group, resource string) bool {
	if f == nil {
		return true
	}
	for _, p := range f.exclude {
		if p.matches(group, resource) {
			return false
		}
	}
	if len(f.include) == 0 {
		return true
	}
	for _, p := range f.include {
		if p.matches(group, resource) {
			return true
		}
	}
	return false
}

// BuiltinNamespaced reports whether the objects of a built-in kind are
// namespaced; ok is false for a kind of no built-in type (a custom
// resource, or a kind newer than this build). A kind's scope is the same
// in every version of its group.
func BuiltinNamespaced(group, kind string) (namespaced, ok bool) {
	for _, t := range builtinTypes {
		if t.Group == group && t.Kind == kind {
			return t.Namespaced, true
		}
	}
	return false, false
}
