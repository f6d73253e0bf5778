package inspect

import (
	"crypto/sha256"
	"encoding/hex"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SecretsResource is the resource whose values are redacted.
var SecretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// lastApplied is kubectl's annotation, which holds a copy of the applied
// Secret, values included.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// RedactSecret replaces, in place, every value of a Secret's data and
// stringData and its last-applied-configuration annotation by a hash:
// "sha256:" and the first 16 hex digits of the SHA-256 of the value. Equal
// values hash equal, so a change still shows as a change.
func RedactSecret(u *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		m, ok := u.Object[field].(map[string]any)
		if !ok {
			continue
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				m[k] = Hash(s)
			} else {
				m[k] = Hash("")
			}
		}
	}
	if ann := u.GetAnnotations(); ann != nil {
		if v, ok := ann[lastApplied]; ok {
			md, _ := u.Object["metadata"].(map[string]any)
			if a, ok := md["annotations"].(map[string]any); ok {
				a[lastApplied] = Hash(v)
			}
		}
	}
}

// Hash is the redacted form of a secret value.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:8])
}
