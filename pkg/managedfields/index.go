package managedfields

import (
	"math"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// canonScalar writes a scalar so that values equal under equalValue (ints
// and integral floats alike) write the same; ok is false for non-scalars.
func canonScalar(b *strings.Builder, v any) bool {
	switch t := v.(type) {
	case nil:
		b.WriteString("z")
	case string:
		b.WriteString("s")
		b.WriteString(t)
	case bool:
		if t {
			b.WriteString("bt")
		} else {
			b.WriteString("bf")
		}
	case int64:
		b.WriteString("n")
		b.WriteString(strconv.FormatInt(t, 10))
	case int:
		b.WriteString("n")
		b.WriteString(strconv.Itoa(t))
	case int32:
		b.WriteString("n")
		b.WriteString(strconv.FormatInt(int64(t), 10))
	case float64:
		b.WriteString("n")
		if t == math.Trunc(t) && math.Abs(t) < 1<<62 {
			b.WriteString(strconv.FormatInt(int64(t), 10))
		} else {
			b.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
		}
	default:
		return false
	}
	return true
}

// elemKey is a map key for a path element. The common elements (field
// names, single-key items and scalar set items) make one without
// allocating; the rest fall back to a canonical or serialized string.
type elemKey struct {
	kind byte
	a, b string
	n    int64
}

func elementKey(pe fieldpath.PathElement) elemKey {
	switch {
	case pe.FieldName != nil:
		return elemKey{kind: 'f', a: *pe.FieldName}
	case pe.Index != nil:
		return elemKey{kind: 'i', n: int64(*pe.Index)}
	case pe.Key != nil && len(*pe.Key) == 1:
		f := (*pe.Key)[0]
		switch v := f.Value.Unstructured().(type) {
		case string:
			return elemKey{kind: 'k', a: f.Name, b: v}
		case int64:
			return elemKey{kind: 'K', a: f.Name, n: v}
		case float64:
			// Equal to the int of the same value, as for PathElement.Equals.
			if v == math.Trunc(v) && math.Abs(v) < 1<<62 {
				return elemKey{kind: 'K', a: f.Name, n: int64(v)}
			}
		}
	case pe.Value != nil:
		if v, ok := (*pe.Value).Unstructured().(string); ok {
			return elemKey{kind: 'v', a: v}
		}
	}
	return elemKey{kind: 'x', a: slowElementKey(pe)}
}

// slowElementKey writes keys and values canonically (ints and integral
// floats alike), or serialized when they are not scalars.
func slowElementKey(pe fieldpath.PathElement) string {
	switch {
	case pe.Key != nil:
		var b strings.Builder
		b.WriteString("k:")
		ok := true
		for _, f := range *pe.Key {
			b.WriteString(f.Name)
			b.WriteByte(0)
			ok = ok && canonScalar(&b, f.Value.Unstructured())
			b.WriteByte(0)
		}
		if ok {
			return b.String()
		}
	case pe.Value != nil:
		var b strings.Builder
		b.WriteString("v:")
		if canonScalar(&b, (*pe.Value).Unstructured()) {
			return b.String()
		}
	}
	s, err := fieldpath.SerializePathElement(pe)
	if err != nil {
		return "?:" + pe.String()
	}
	return "x:" + s
}

// listIndex finds keyed and set items of one list in constant time, so that
// attaching a list of n owned items costs O(n), not O(n²).
type listIndex struct {
	list []any
	// byNames maps the key field names, joined, to the key values of each
	// item (canonical, joined) and the item's first index.
	byNames map[string]map[string]int
	values  map[string]int
}

func newListIndex(l []any) *listIndex {
	return &listIndex{list: l, byNames: map[string]map[string]int{}}
}

// find resolves a Key or Value element; ok is false when the item is
// missing, and indexed is false when the element cannot be indexed (a
// non-scalar key), in which case the caller scans the list.
func (x *listIndex) find(pe fieldpath.PathElement) (item any, index int, ok, indexed bool) {
	var b strings.Builder
	switch {
	case pe.Key != nil:
		names := keyNames(*pe.Key)
		m, built := x.byNames[names]
		if !built {
			m = x.buildKeys(*pe.Key)
			x.byNames[names] = m
		}
		for _, f := range *pe.Key {
			if !canonScalar(&b, f.Value.Unstructured()) {
				return nil, -1, false, false
			}
			b.WriteByte(0)
		}
		i, found := m[b.String()]
		if !found {
			return nil, -1, false, true
		}
		return x.list[i], i, true, true
	case pe.Value != nil:
		if x.values == nil {
			x.values = map[string]int{}
			for i, it := range x.list {
				var ib strings.Builder
				if canonScalar(&ib, it) {
					if _, dup := x.values[ib.String()]; !dup {
						x.values[ib.String()] = i
					}
				}
			}
		}
		if !canonScalar(&b, (*pe.Value).Unstructured()) {
			return nil, -1, false, false
		}
		i, found := x.values[b.String()]
		if !found {
			return nil, -1, false, true
		}
		return x.list[i], i, true, true
	}
	return nil, -1, false, false
}

func keyNames(key value.FieldList) string {
	var b strings.Builder
	for _, f := range key {
		b.WriteString(f.Name)
		b.WriteByte(0)
	}
	return b.String()
}

func (x *listIndex) buildKeys(key value.FieldList) map[string]int {
	m := map[string]int{}
	for i, it := range x.list {
		obj, ok := it.(map[string]any)
		if !ok {
			continue
		}
		var b strings.Builder
		complete := true
		for _, f := range key {
			v, found := obj[f.Name]
			if !found || !canonScalar(&b, normalize(v)) {
				complete = false
				break
			}
			b.WriteByte(0)
		}
		if complete {
			if _, dup := m[b.String()]; !dup {
				m[b.String()] = i
			}
		}
	}
	return m
}
