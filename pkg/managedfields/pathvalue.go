package managedfields

import (
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// This file reads and writes unstructured values (the JSON types:
// map[string]any, []any, string, int64, float64, bool, nil) along a
// fieldpath.Path, the path type ParsePath returns.
//
// A list item is addressed by index ([1]), by its key fields ([name=app])
// or, in a set, by its value ([=example.com/x]). Values compare as
// MatchElement compares them: [port=80] selects 80, 80.0 and "80".

// GetPath returns the value at p in obj; ok is false when something on the
// way is absent or of another type.
func GetPath(obj map[string]any, p fieldpath.Path) (v any, ok bool) {
	var cur any = obj
	for _, pe := range p {
		if pe.FieldName != nil {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
			continue
		}
		l, _ := cur.([]any)
		i := listItem(l, pe)
		if i < 0 {
			return nil, false
		}
		cur = l[i]
	}
	return cur, true
}

// SetPath writes v at p in obj, creating the maps that are missing on the
// way; list items must exist. It copies every map and list it changes or
// descends into (copy on write): obj's top level is the caller's, and
// everything below it may be shared with others, such as a cache.
func SetPath(obj map[string]any, p fieldpath.Path, v any) error {
	var cur any = obj
	for i, pe := range p {
		last := i == len(p)-1
		if pe.FieldName == nil {
			l, _ := cur.([]any)
			j := listItem(l, pe)
			if j < 0 {
				return fmt.Errorf("%s: %s", ShortPathString(p[:i+1]), missingItem(pe))
			}
			if last {
				l[j] = v
				return nil
			}
			l[j] = ownCopy(l[j])
			cur = l[j]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object", ShortPathString(p[:i]))
		}
		name := *pe.FieldName
		if last {
			m[name] = v
			return nil
		}
		next, ok := m[name]
		switch {
		case ok && next != nil:
			next = ownCopy(next)
		case p[i+1].FieldName == nil:
			return fmt.Errorf("%s: no list", ShortPathString(p[:i+1]))
		default:
			next = map[string]any{}
		}
		m[name] = next
		cur = next
	}
	return nil
}

// listItem returns the index of the item of l that pe addresses, or -1.
func listItem(l []any, pe fieldpath.PathElement) int {
	switch {
	case pe.Index != nil:
		if *pe.Index < len(l) {
			return *pe.Index
		}
	case pe.Key != nil:
		return slices.IndexFunc(l, func(it any) bool {
			m, ok := it.(map[string]any)
			if !ok {
				return false
			}
			for _, f := range *pe.Key {
				fv, ok := m[f.Name]
				if !ok || !looseEqual(f.Value, value.NewValueInterface(fv)) {
					return false
				}
			}
			return true
		})
	case pe.Value != nil:
		return slices.IndexFunc(l, func(it any) bool {
			return looseEqual(*pe.Value, value.NewValueInterface(it))
		})
	}
	return -1
}

// missingItem says which item listItem did not find: "no list item 3",
// "no list item with name=app".
func missingItem(pe fieldpath.PathElement) string {
	if pe.Index != nil {
		return fmt.Sprintf("no list item %d", *pe.Index)
	}
	sel := ShortPathString(fieldpath.Path{pe})
	return "no list item with " + sel[1:len(sel)-1]
}

// ownCopy returns a shallow copy of a map or list (other values are
// immutable).
func ownCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return maps.Clone(x)
	case []any:
		return slices.Clone(x)
	}
	return v
}
