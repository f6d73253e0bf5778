package owners

import (
	"encoding/json"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// jsonLen returns len(json.Marshal(v)) for the values unstructured objects
// hold (map[string]any, []any, string, int64, float64, bool, nil), without
// building the encoding: the size view weighs every object of a type, and
// json.Marshal's reflection and key sorting were most of its cost
// (BenchmarkSize50k). Strings go through jsonvalue.AppendString, the one
// encoder of JSON strings; other types, and floats, through json.Marshal.
// FuzzJSONLen holds it equal to len(json.Marshal(v)).
func jsonLen(v any, scratch *[]byte) (int, error) {
	switch t := v.(type) {
	case nil:
		return len("null"), nil
	case string:
		*scratch = jsonvalue.AppendString((*scratch)[:0], t)
		return len(*scratch), nil
	case bool:
		if t {
			return len("true"), nil
		}
		return len("false"), nil
	case int64:
		*scratch = strconv.AppendInt((*scratch)[:0], t, 10)
		return len(*scratch), nil
	case map[string]any:
		if t == nil {
			return len("null"), nil
		}
		n := 2 + max(len(t)-1, 0) // {} and the commas
		for k, e := range t {
			*scratch = jsonvalue.AppendString((*scratch)[:0], k)
			n += len(*scratch) + 1 // "key":
			m, err := jsonLen(e, scratch)
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	case []any:
		if t == nil {
			return len("null"), nil
		}
		n := 2 + max(len(t)-1, 0)
		for _, e := range t {
			m, err := jsonLen(e, scratch)
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	}
	b, err := json.Marshal(v)
	return len(b), err
}
