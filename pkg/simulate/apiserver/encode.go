package apiserver

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// encode serializes an unstructured object as JSON with sorted keys, as
// encoding/json does, without reflection: the store's bytes are written on
// every simulated write, and no-op detection compares them. The output is
// valid JSON that decodes to the same value.
func encode(obj map[string]any) ([]byte, error) {
	e := encoder{more: make([]string, 0, 16)}
	return e.appendValue(make([]byte, 0, 512), obj)
}

// encoder holds the scratch space of one encoding: the sorted keys of the
// maps on the current path share one slice.
type encoder struct {
	more []string
}

func (e *encoder) appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonvalue.AppendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("unsupported value %v", x)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case map[string]any:
		start := len(e.more)
		for k := range x {
			e.more = append(e.more, k)
		}
		keys := e.more[start:]
		slices.Sort(keys)
		defer func() { e.more = e.more[:start] }()
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonvalue.AppendString(b, k)
			b = append(b, ':')
			if b, err = e.appendValue(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, it := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = e.appendValue(b, it); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	default:
		j, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return append(b, j...), nil
	}
}
