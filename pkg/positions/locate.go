package positions

import (
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Location is where a finding about a field of an object points.
type Location struct {
	// Position is in the file that was read: the field's key (the
	// `replicas:` of .spec.replicas), a list item's first line (the
	// `- name: web` of [name="web"]), the alias the field is reached
	// through, or, when the field is not in the file, its nearest ancestor
	// that is, and at last the object's Start.
	Position
	// Path is the part of the asked path that Position places: all of it
	// when Exact, an ancestor (maybe the empty path: the object) when not.
	Path fieldpath.Path
	// Exact reports whether the whole path was found.
	Exact bool
	// Template is the template the object was rendered from, or nil: when
	// set, the file a pull request changes is the template, and Position
	// is a line of rendered output.
	Template *Template
}

// Locate finds the field path p of o. It resolves field names, list items
// keyed by their merge keys ([name="web"], [port=80,protocol="TCP"]), set
// items by value ([="x"]) and indexes ([0]); a path that does not resolve
// is placed at its nearest ancestor that does. Key values compare as
// structured-merge-diff values: 80 matches a port written 80 or 80.0.
func (o *Object) Locate(p fieldpath.Path) Location {
	loc := Location{Position: o.Start, Path: fieldpath.Path{}, Template: o.Template}
	cur, via := deref(o.root, nil)
	for i, pe := range p {
		key, val, inner := step(cur, pe)
		if val == nil {
			return loc
		}
		if via == nil {
			via = inner
		}
		at := key
		if via != nil {
			at = via
		}
		loc.Position = o.lines.pos(at)
		loc.Path = p[:i+1]
		cur, via = deref(val, via)
	}
	loc.Exact = true
	return loc
}

// step finds pe in n. key is the node that names it (a mapping key, a
// list item), val its value, via the alias of a merge key it was found
// through, or nil.
func step(n *yaml.Node, pe fieldpath.PathElement) (key, val, via *yaml.Node) {
	switch {
	case pe.FieldName != nil:
		if n.Kind == yaml.MappingNode {
			return field(n, *pe.FieldName)
		}
	case pe.Index != nil:
		if n.Kind == yaml.SequenceNode && *pe.Index >= 0 && *pe.Index < len(n.Content) {
			it := n.Content[*pe.Index]
			return it, it, nil
		}
	case pe.Key != nil:
		return item(n, func(it *yaml.Node) bool { return keyMatches(it, *pe.Key) })
	case pe.Value != nil:
		return item(n, func(it *yaml.Node) bool { return scalarEquals(it, *pe.Value) })
	}
	return nil, nil, nil
}

// item returns the first item of the list n that match accepts.
func item(n *yaml.Node, match func(*yaml.Node) bool) (key, val, via *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		return nil, nil, nil
	}
	for _, it := range n.Content {
		if match(it) {
			return it, it, nil
		}
	}
	return nil, nil, nil
}

// keyMatches reports whether the list item it has every key field of
// keys with an equal value.
func keyMatches(it *yaml.Node, keys value.FieldList) bool {
	m, _ := deref(it, nil)
	if m.Kind != yaml.MappingNode {
		return false
	}
	for _, k := range keys {
		_, v, _ := field(m, k.Name)
		if v == nil || !scalarEquals(v, k.Value) {
			return false
		}
	}
	return true
}

// scalarEquals reports whether n is a scalar whose value equals v.
func scalarEquals(n *yaml.Node, v value.Value) bool {
	n, _ = deref(n, nil)
	if n.Kind != yaml.ScalarNode {
		return false
	}
	return value.Equals(value.NewValueInterface(scalarValue(n)), v)
}
