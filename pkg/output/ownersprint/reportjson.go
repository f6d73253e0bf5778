package ownersprint

import (
	"slices"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// AppendIndentedJSON appends the report exactly as json.MarshalIndent(r,
// "", "  ") writes it. A large object has thousands of fields, and
// encoding/json's reflection and re-indenting took most of the time of
// owners -o json: the fields and hazards are written here, each distinct
// owner list marshalled once per object, and the entries by encoding/json.
func (r Report) AppendIndentedJSON(b []byte, out *output.JSONOut) ([]byte, error) {
	if out == nil {
		size := 1 << 10
		for _, or := range r.Items {
			size += 1<<10 + 768*len(or.Fields) // a field with one owner takes 500-700 bytes
		}
		b = slices.Grow(b, size)
	}
	b = output.AppendJSONDocumentStart(b, r.APIVersion, r.Kind)
	b = append(b, ',')
	b = output.AppendJSONKey(b, 1, "items")
	var err error
	b, err = output.AppendJSONArray(b, 1, len(r.Items), r.Items == nil, func(b []byte, i int) ([]byte, error) {
		return r.Items[i].appendIndentedJSON(out.Spill(b), 2)
	})
	if err != nil {
		return nil, err
	}
	b = output.AppendJSONIndent(b, 0)
	return append(b, '}'), nil
}

// appendIndentedJSON writes the object report at depth.
func (or *ObjectReport) appendIndentedJSON(b []byte, depth int) ([]byte, error) {
	b = output.AppendJSONIndent(b, depth)
	b = append(b, '{')
	str := func(key, val string, omitEmpty bool) {
		if omitEmpty && val == "" {
			return
		}
		b = output.AppendJSONKey(b, depth+1, key)
		b = output.AppendJSONString(b, val)
		b = append(b, ',')
	}
	str("apiVersion", or.APIVersion, false)
	str("kind", or.Kind, false)
	str("namespace", or.Namespace, true)
	str("name", or.Name, false)
	str("source", or.Source, true)
	var err error
	b = output.AppendJSONKey(b, depth+1, "entries")
	if b, err = output.AppendMarshalIndent(b, depth+1, or.Entries); err != nil {
		return nil, err
	}
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "fields")
	owners := map[[4]int]ownersJSON{}
	b, err = output.AppendJSONArray(b, depth+1, len(or.Fields), or.Fields == nil, func(b []byte, i int) ([]byte, error) {
		return or.Fields[i].appendIndentedJSON(b, depth+2, owners)
	})
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "hazards")
	hazardOwners := map[[4]int]ownersJSON{}
	b, err = output.AppendJSONArray(b, depth+1, len(or.Hazards), or.Hazards == nil, func(b []byte, i int) ([]byte, error) {
		return appendHazard(b, depth+2, &or.Hazards[i], hazardOwners)
	})
	if err != nil {
		return nil, err
	}
	if or.Drift != nil {
		if b, err = output.AppendMarshalField(b, depth+1, "drift", or.Drift); err != nil {
			return nil, err
		}
	}
	b = output.AppendJSONIndent(b, depth)
	return append(b, '}'), nil
}

// ownersJSON is an owner list and its JSON.
type ownersJSON struct {
	owners []managedfields.Owner
	js     []byte
}

// appendIndentedJSON writes the field report at depth; owners remembers
// the JSON of owner lists (most fields of an object share a few).
func (f *FieldReport) appendIndentedJSON(b []byte, depth int, owners map[[4]int]ownersJSON) ([]byte, error) {
	b = output.AppendJSONIndent(b, depth)
	b = append(b, '{')
	b = output.AppendJSONKey(b, depth+1, "path")
	b = output.AppendJSONString(b, f.Path)
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "elements")
	b, _ = output.AppendJSONArray(b, depth+1, len(f.Elements), f.Elements == nil, func(b []byte, i int) ([]byte, error) {
		b = output.AppendJSONIndent(b, depth+2)
		return output.AppendJSONString(b, f.Elements[i]), nil
	})
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "owners")
	b, err := appendOwners(b, depth+1, f.Owners, owners)
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "present")
	if f.Present {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	for _, kv := range [...]struct {
		key string
		val int
	}{{"line", f.Line}, {"column", f.Column}} {
		if kv.val != 0 {
			b = append(b, ',')
			b = output.AppendJSONKey(b, depth+1, kv.key)
			b = strconv.AppendInt(b, int64(kv.val), 10)
		}
	}
	b = output.AppendJSONIndent(b, depth)
	return append(b, '}'), nil
}

// appendOwners writes an owner list whose key is at depth; cache
// remembers the JSON of lists at that depth.
func appendOwners(b []byte, depth int, os []managedfields.Owner, cache map[[4]int]ownersJSON) ([]byte, error) {
	key, cacheable := ownersKey(os)
	c, cached := cache[key]
	if !cacheable || !cached || !slices.Equal(c.owners, os) {
		js, err := output.AppendMarshalIndent(nil, depth, os)
		if err != nil {
			return nil, err
		}
		c = ownersJSON{owners: os, js: js}
		if cacheable {
			cache[key] = c
		}
	}
	return append(b, c.js...), nil
}

// appendHazard writes h at depth as its MarshalJSON, indented, would: an
// ownership hazard can list thousands of fields.
func appendHazard(b []byte, depth int, h *managedfields.Hazard, owners map[[4]int]ownersJSON) ([]byte, error) {
	b = output.AppendJSONIndent(b, depth)
	b = append(b, '{')
	b = output.AppendJSONKey(b, depth+1, "type")
	b = output.AppendJSONString(b, string(h.Type))
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth+1, "owners")
	b, err := appendOwners(b, depth+1, h.Owners, owners)
	if err != nil {
		return nil, err
	}
	b = append(b, ',')
	if fields := h.FieldStrings(); len(fields) > 0 {
		b = output.AppendJSONKey(b, depth+1, "fields")
		b, _ = output.AppendJSONArray(b, depth+1, len(fields), false, func(b []byte, i int) ([]byte, error) {
			b = output.AppendJSONIndent(b, depth+2)
			return output.AppendJSONString(b, fields[i]), nil
		})
		b = append(b, ',')
	}
	b = output.AppendJSONKey(b, depth+1, "message")
	b = output.AppendJSONString(b, h.Message)
	b = output.AppendJSONIndent(b, depth)
	return append(b, '}'), nil
}

// ownersKey names a non-empty list of up to four owners by their entries.
func ownersKey(owners []managedfields.Owner) (key [4]int, ok bool) {
	key = [4]int{-1, -1, -1, -1}
	if len(owners) == 0 || len(owners) > len(key) {
		return key, false
	}
	for i, o := range owners {
		key[i] = o.Entry
	}
	return key, true
}
