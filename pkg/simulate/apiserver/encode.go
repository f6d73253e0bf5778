package apiserver

import (
	"encoding/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// encode serializes an unstructured object as encoding/json does (sorted
// keys, the same float forms) without reflection: the store's bytes are
// written on every simulated write, and no-op detection compares them.
// jsonvalue.AppendValue writes what objects hold; anything else is left to
// encoding/json.
func encode(obj map[string]any) ([]byte, error) {
	if b, ok := jsonvalue.AppendValue(make([]byte, 0, 512), obj); ok {
		return b, nil
	}
	return json.Marshal(obj)
}
