package jsonvalue

// WithoutMeta returns a shallow copy of obj, a decoded object, whose
// metadata lacks keys; nothing else is copied, so obj, which the caller
// may share, stays as it is. An obj without metadata is copied as it is.
func WithoutMeta(obj map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md))
		for k, v := range md {
			m[k] = v
		}
		for _, k := range keys {
			delete(m, k)
		}
		out["metadata"] = m
	}
	return out
}
