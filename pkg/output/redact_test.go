package output

import (
	"bytes"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

type stamped struct {
	Data  map[string]any `json:"data"`
	stamp redact.Stamp
}

func (s stamped) CheckSecrets() error { return s.stamp.Require("test Secret") }

// TestPrintRefusesUnredactedSecrets checks the guard of the printing
// layer: a raw Secret, or content whose Secret never went through
// pkg/redact, is not printed in any format; redacted content is.
func TestPrintRefusesUnredactedSecrets(t *testing.T) {
	raw := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s1"},
		"data": map[string]any{"password": "aHVudGVyMg=="},
	}}
	r := redact.New(false)
	tests := []struct {
		name string
		obj  any
		ok   bool
	}{
		{"raw Secret", raw, false},
		{"raw content", raw.Object, false},
		{"forgotten", stamped{Data: raw.Object}, false},
		{"redacted", stamped{Data: r.Object(raw.Object), stamp: r.Stamp()}, true},
	}
	for _, tt := range tests {
		for _, f := range []Format{JSON, YAML} {
			t.Run(tt.name+"/"+string(f), func(t *testing.T) {
				var out bytes.Buffer
				p := &Printer{Format: f, Out: &out}
				for _, err := range []error{p.PrintObject(tt.obj), p.PrintJSONLine(tt.obj)} {
					if tt.ok != (err == nil) || (err != nil && !errors.Is(err, redact.ErrNotRedacted)) {
						t.Errorf("got %v, want ok %v", err, tt.ok)
					}
				}
				if bytes.Contains(out.Bytes(), []byte("aHVudGVyMg==")) {
					t.Errorf("the value was printed: %s", out.Bytes())
				}
			})
		}
	}
}
