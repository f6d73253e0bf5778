package inspect

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// The snapshot body is written on every event, and its previous version
// read back on every change: the two costs that the compact snapshots
// added to the event pipeline. Both are kept small here:
//
//   - encodeBody writes the decoded values a watch returns with
//     jsonvalue.AppendValue, byte for byte as encoding/json writes them
//     (FuzzEncodeBody holds the two equal), and leaves anything else to
//     encoding/json;
//   - a changed object's previous version is decoded only in the top-level
//     fields whose bytes differ (oldAndNew): a status write decodes the old
//     status, not the whole object.

// bodyBuffers are scratch buffers for encodeBody, which returns a copy of
// exactly the body's length: the snapshot keeps it.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// encodeBody returns obj as compact JSON without metadata.managedFields,
// .resourceVersion, and .name, .namespace and .uid when they are non-empty
// strings; nil when it cannot be encoded.
func encodeBody(obj map[string]any) []byte {
	bp := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(bp)
	b, ok := appendBody((*bp)[:0], obj)
	*bp = b[:0]
	if !ok {
		return encodeBodyMarshal(obj)
	}
	return slices.Clone(b)
}

// leftOut reports whether the body leaves out the metadata field k of
// value v.
func leftOut(k string, v any) bool {
	switch k {
	case "managedFields", "resourceVersion":
		return true
	case "name", "namespace", "uid":
		s, ok := v.(string)
		return ok && s != ""
	}
	return false
}

// encodeBodyMarshal is encodeBody done by encoding/json: the reference the
// fuzz target compares with, and the way for values jsonvalue.AppendValue leaves out.
func encodeBodyMarshal(obj map[string]any) []byte {
	top := obj
	if md, ok := obj["metadata"].(map[string]any); ok {
		slim := make(map[string]any, len(md))
		for k, v := range md {
			if !leftOut(k, v) {
				slim[k] = v
			}
		}
		top = make(map[string]any, len(obj))
		for k, v := range obj {
			top[k] = v
		}
		top["metadata"] = slim
	}
	b, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	return b
}

// appendBody appends obj as encoding/json writes it, its metadata without
// the fields leftOut names.
func appendBody(b []byte, obj map[string]any) ([]byte, bool) {
	md, isMap := obj["metadata"].(map[string]any)
	if !isMap {
		return jsonvalue.AppendValue(b, obj)
	}
	// The members before "metadata" in key order, metadata slimmed, then
	// the members after it.
	b, ok := jsonvalue.AppendObject(b, obj, func(k string, _ any) bool { return k >= "metadata" })
	if !ok {
		return b, false
	}
	if len(b) > 2 && b[len(b)-2] != '{' {
		b[len(b)-1] = ','
	} else {
		b = b[:len(b)-1]
	}
	b = append(jsonvalue.AppendString(b, "metadata"), ':')
	if b, ok = jsonvalue.AppendObject(b, md, leftOut); !ok {
		return b, false
	}
	after := len(b)
	if b, ok = jsonvalue.AppendObject(b, obj, func(k string, _ any) bool { return k <= "metadata" }); !ok {
		return b, false
	}
	if len(b)-after == 2 { // {}: nothing after metadata
		return append(b[:after], '}'), true
	}
	b[after] = ','
	return b, true
}

// member is a top-level field of a body: its key and its value as written.
type member struct{ key, value string }

// members splits body, a JSON object as encodeBody writes it (compact, so
// with no space between tokens), into its top-level fields; nil when body
// is not an object.
func members(body string, out []member) []member {
	if len(body) < 2 || body[0] != '{' {
		return nil
	}
	i := 1
	for i < len(body) && body[i] != '}' {
		kEnd := skipString(body, i)
		vEnd := skipValue(body, kEnd+1)
		out = append(out, member{key: body[i:kEnd], value: body[kEnd+1 : vEnd]})
		i = vEnd
		if i < len(body) && body[i] == ',' {
			i++
		}
	}
	return out
}

// skipString returns the end of the JSON string that starts at s[i].
func skipString(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// skipValue returns the end of the compact JSON value that starts at s[i].
func skipValue(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = skipString(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' {
		j++
	}
	return j
}

// unquoteKey returns the key a member's quoted key stands for.
func unquoteKey(raw string) string {
	if !strings.ContainsRune(raw, '\\') {
		return raw[1 : len(raw)-1]
	}
	var k string
	if err := json.Unmarshal([]byte(raw), &k); err != nil {
		// Written by encodeBody: broken only if the encoder is.
		panic("inspect: reading back a snapshot key: " + err.Error())
	}
	return k
}

// decodeValue decodes a member's value as the watch decodes objects.
func decodeValue(raw string) any {
	var v any
	if err := utiljson.Unmarshal([]byte(raw), &v); err != nil {
		// Written by encodeBody: broken only if the encoder is.
		panic("inspect: reading back a snapshot: " + err.Error())
	}
	return v
}
