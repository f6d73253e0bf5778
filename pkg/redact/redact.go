package redact

import (
	"crypto/sha256"
	"encoding/hex"
)

// LastAppliedAnnotation is kubectl's client-side-apply annotation; on a
// Secret it holds the data in clear text.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// HiddenValue is the marker of Hidden.
const HiddenValue = "<hidden>"

// secretFields are a Secret's fields whose values are secret.
var secretFields = []string{"data", "stringData"}

// Marker turns a secret value into what is shown instead.
type Marker func(value string) string

// Hash is the redacted form of a secret value: "sha256:" and the first 16
// hex digits of the SHA-256 of the value.
func Hash(value string) string {
	sum := sha256.Sum256([]byte(value))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// Hidden is the marker that tells nothing of the value: HiddenValue.
func Hidden(string) string { return HiddenValue }

// IsSecret reports whether obj (an object's content, as in
// unstructured.Unstructured.Object) is a core v1 Secret.
func IsSecret(obj map[string]any) bool {
	return IsSecretKind(str(obj["apiVersion"]), str(obj["kind"]))
}

// IsSecretKind reports whether apiVersion and kind name a core v1 Secret.
func IsSecretKind(apiVersion, kind string) bool {
	return apiVersion == "v1" && kind == "Secret"
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Secret returns a copy of a Secret's content with every value of data
// and stringData, and the last-applied annotation, replaced by mark(value).
// Keys stay: which keys a Secret has is not secret. A value that is not a
// string is marked as "", and so is a data or stringData that is not a map.
// obj is not changed; the copy shares everything Secret does not replace.
// Secret does not look at the kind: the caller decides what is a Secret.
func Secret(obj map[string]any, mark Marker) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for _, f := range secretFields {
		switch m := obj[f].(type) {
		case nil:
		case map[string]any:
			h := make(map[string]any, len(m))
			for k, v := range m {
				h[k] = mark(str(v))
			}
			out[f] = h
		default:
			out[f] = mark("")
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		out["metadata"] = metadata(md, mark)
	}
	return out
}

// metadata returns md with the last-applied annotation marked, or md
// itself when it has none.
func metadata(md map[string]any, mark Marker) map[string]any {
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		return md
	}
	v, found := ann[LastAppliedAnnotation]
	if !found {
		return md
	}
	out := make(map[string]any, len(md))
	for k, v := range md {
		out[k] = v
	}
	a := make(map[string]any, len(ann))
	for k, v := range ann {
		a[k] = v
	}
	a[LastAppliedAnnotation] = mark(str(v))
	out["annotations"] = a
	return out
}
