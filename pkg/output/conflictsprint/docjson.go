package conflictsprint

import (
	"slices"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// AppendIndentedJSON appends the document exactly as json.MarshalIndent(d,
// "", "  ") writes it. A log's report has an entry per object written
// (20,000 for the 1 GiB benchmark log), and encoding/json's reflection and
// re-indenting of them, and of the writers' winners (20,000 too), was most
// of the time the command spent after reading the log: those lists are
// written here, the rest by encoding/json.
func (d Document) AppendIndentedJSON(b []byte, out *output.JSONOut) ([]byte, error) {
	if out == nil {
		b = slices.Grow(b, 4<<10+len(d.Objects)*512)
	}
	b = output.AppendJSONDocumentStart(b, d.APIVersion, d.Kind)
	var err error
	for _, f := range []struct {
		key string
		v   any
	}{{"scope", d.Scope}, {"summary", d.Summary}, {"input", d.Input}} {
		if b, err = output.AppendMarshalField(b, 1, f.key, f.v); err != nil {
			return nil, err
		}
	}
	b = append(b, ',')
	b = output.AppendJSONKey(b, 1, "objects")
	b, _ = output.AppendJSONArray(b, 1, len(d.Objects), d.Objects == nil, func(b []byte, i int) ([]byte, error) {
		return appendObjectStats(out.Spill(b), 2, &d.Objects[i]), nil
	})
	b = append(b, ',')
	b = output.AppendJSONKey(b, 1, "writers")
	if b, err = output.AppendJSONArray(b, 1, len(d.Writers), d.Writers == nil, func(b []byte, i int) ([]byte, error) {
		return appendWriterStats(out.Spill(b), 2, &d.Writers[i])
	}); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		key string
		v   any
	}{{"causes", d.Causes}, {"timeline", d.Timeline}} {
		if f.key == "timeline" && len(d.Timeline) == 0 {
			continue
		}
		if b, err = output.AppendMarshalField(b, 1, f.key, f.v); err != nil {
			return nil, err
		}
	}
	b = output.AppendJSONIndent(b, 0)
	return append(b, '}'), nil
}

// appendObjectStats writes one object's figures at depth, as
// encoding/json does: its fields in order, the empty ones omitted where
// the struct tags say so.
func appendObjectStats(b []byte, depth int, o *conflicts.ObjectStats) []byte {
	b = output.AppendJSONIndent(b, depth)
	b = append(b, '{')
	b = output.AppendJSONKey(b, depth+1, "object")
	b = append(b, '{')
	k := &o.Object
	first := true
	str := func(key, v string, omitEmpty bool) {
		if omitEmpty && v == "" {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = output.AppendJSONKey(b, depth+2, key)
		b = output.AppendJSONString(b, v)
	}
	str("group", k.Group, true)
	str("resource", k.Resource, false)
	str("namespace", k.Namespace, true)
	str("name", k.Name, false)
	b = output.AppendJSONIndent(b, depth+1)
	b = append(b, '}')
	b = appendTally(b, depth+1, &o.Tally)
	b = appendInt(b, depth+1, "writers", o.Writers)
	if o.WorstWriter != "" {
		b = append(b, ',')
		b = output.AppendJSONKey(b, depth+1, "worstWriter")
		b = output.AppendJSONString(b, o.WorstWriter)
	}
	if o.WorstConflicts != 0 {
		b = appendInt(b, depth+1, "worstConflicts", o.WorstConflicts)
	}
	b = output.AppendJSONIndent(b, depth)
	return append(b, '}')
}

// appendWriterStats writes one writer's figures at depth, as encoding/json
// does; only the list of winners, the long part, is written here.
func appendWriterStats(b []byte, depth int, w *conflicts.WriterStats) ([]byte, error) {
	b = output.AppendJSONIndent(b, depth)
	b = append(b, '{')
	b = output.AppendJSONKey(b, depth+1, "writer")
	b, err := output.AppendMarshalIndent(b, depth+1, w.Writer)
	if err != nil {
		return nil, err
	}
	if w.UserAgent != "" {
		b = append(b, ',')
		b = output.AppendJSONKey(b, depth+1, "userAgent")
		b = output.AppendJSONString(b, w.UserAgent)
	}
	if w.Shared != nil {
		if b, err = output.AppendMarshalField(b, depth+1, "shared", w.Shared); err != nil {
			return nil, err
		}
	}
	b = appendTally(b, depth+1, &w.Tally)
	if b, err = output.AppendMarshalField(b, depth+1, "conflictRate", w.ConflictRate); err != nil {
		return nil, err
	}
	b = appendInt(b, depth+1, "objects", w.Objects)
	for _, f := range []struct {
		key string
		v   float64
	}{{"conflictSeconds", w.ConflictSeconds}, {"retrySeconds", w.RetrySeconds}} {
		if f.v != 0 {
			if b, err = output.AppendMarshalField(b, depth+1, f.key, f.v); err != nil {
				return nil, err
			}
		}
	}
	if len(w.LostTo) > 0 {
		b = append(b, ',')
		b = output.AppendJSONKey(b, depth+1, "lostTo")
		b, _ = output.AppendJSONArray(b, depth+1, len(w.LostTo), false, func(b []byte, i int) ([]byte, error) {
			b = output.AppendJSONIndent(b, depth+2)
			b = append(b, '{')
			b = output.AppendJSONKey(b, depth+3, "name")
			b = output.AppendJSONString(b, w.LostTo[i].Name)
			b = appendInt(b, depth+3, "count", w.LostTo[i].Count)
			b = output.AppendJSONIndent(b, depth+2)
			return append(b, '}'), nil
		})
	}
	if len(w.Causes) > 0 {
		if b, err = output.AppendMarshalField(b, depth+1, "causes", w.Causes); err != nil {
			return nil, err
		}
	}
	if len(w.FieldsLost) > 0 {
		if b, err = output.AppendMarshalField(b, depth+1, "fieldsLost", w.FieldsLost); err != nil {
			return nil, err
		}
	}
	b = output.AppendJSONIndent(b, depth)
	return append(b, '}'), nil
}

// appendTally writes a Tally's fields, each after a comma, at depth.
func appendTally(b []byte, depth int, t *conflicts.Tally) []byte {
	b = appendInt(b, depth, "attempts", t.Attempts)
	b = appendInt(b, depth, "conflicts", t.Conflicts)
	b = appendInt(b, depth, "successes", t.Successes)
	b = appendInt(b, depth, "retryChains", t.RetryChains)
	return appendInt(b, depth, "giveUps", t.GiveUps)
}

// appendInt writes a comma, then the key at depth and v.
func appendInt(b []byte, depth int, key string, v int) []byte {
	b = append(b, ',')
	b = output.AppendJSONKey(b, depth, key)
	return strconv.AppendInt(b, int64(v), 10)
}
