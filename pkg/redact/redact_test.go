package redact

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

const (
	plain   = "hunter2-plain"
	encoded = "aHVudGVyMi1lbmNvZGVk" // hunter2-encoded
	applied = `{"data":{"password":"aHVudGVyMi1lbmNvZGVk"}}`
)

func secret() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "db", "annotations": map[string]any{LastAppliedAnnotation: applied, "keep": "me"}},
		"data":       map[string]any{"password": encoded},
		"stringData": map[string]any{"token": plain, "n": int64(3)},
	}
}

func TestSecret(t *testing.T) {
	for _, tt := range []struct {
		name string
		mark Marker
	}{{"hash", Hash}, {"hidden", Hidden}} {
		t.Run(tt.name, func(t *testing.T) {
			in := secret()
			got := Secret(in, tt.mark)
			want := map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"metadata":   map[string]any{"name": "db", "annotations": map[string]any{LastAppliedAnnotation: tt.mark(applied), "keep": "me"}},
				"data":       map[string]any{"password": tt.mark(encoded)},
				"stringData": map[string]any{"token": tt.mark(plain), "n": tt.mark("")},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(secret(), in); diff != "" {
				t.Errorf("the input changed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretOddShapes(t *testing.T) {
	got := Secret(map[string]any{"data": "AAAA", "metadata": map[string]any{"name": "x"}}, Hidden)
	want := map[string]any{"data": HiddenValue, "metadata": map[string]any{"name": "x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if Secret(nil, Hash) != nil {
		t.Error("Secret(nil) should be nil")
	}
}

func TestHash(t *testing.T) {
	if strings.Contains(Hash("x"), "x") || len(Hash("x")) != len("sha256:")+16 || Hash("x") == Hash("y") || Hash("x") != Hash("x") {
		t.Errorf("Hash is not a stable 16-digit hash: %s", Hash("x"))
	}
}

func TestRedactorObject(t *testing.T) {
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": plain}}
	r := New(false)
	if diff := cmp.Diff(cm, r.Object(cm)); diff != "" {
		t.Errorf("a ConfigMap changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Secret(secret(), Hash), r.Object(secret())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	shown := New(true)
	if diff := cmp.Diff(secret(), shown.Object(secret())); diff != "" {
		t.Errorf("show changed the Secret (-want +got):\n%s", diff)
	}
	if !r.Stamp().Checked() || r.Stamp().Shown() || !shown.Stamp().Shown() || (Stamp{}).Checked() {
		t.Errorf("stamps: redacted %+v, shown %+v", r.Stamp(), shown.Stamp())
	}
}

// leaks lists the secret values of secret() found in s, plain or encoded.
func leaks(s string) []string {
	var out []string
	for _, v := range []string{plain, encoded, "hunter2-encoded", base64.StdEncoding.EncodeToString([]byte(plain))} {
		if strings.Contains(s, v) {
			out = append(out, v)
		}
	}
	return out
}

func TestRedactorString(t *testing.T) {
	r := New(false)
	msg := fmt.Sprintf("bad %s, decoded hunter2-encoded, %q, base64 %s; abc", plain, applied, base64.StdEncoding.EncodeToString([]byte(plain)))
	if got := r.String(msg); got != msg {
		t.Errorf("nothing remembered yet, but the message changed: %s", got)
	}
	r.Remember(secret())
	got := r.String(msg)
	if l := leaks(got); len(l) > 0 {
		t.Errorf("%s\nleaks %q", got, l)
	}
	if !strings.HasPrefix(got, "bad "+Hash(plain)) || !strings.HasSuffix(got, "; abc") {
		t.Errorf("got %s", got)
	}
	if New(true).String(msg) != msg {
		t.Error("show changed the message")
	}
}

func TestRedactorError(t *testing.T) {
	r := New(false)
	r.Remember(secret())
	base := apierrors.NewInvalid(schema.GroupKind{Kind: "Secret"}, "db", nil)
	err := r.Error(fmt.Errorf("value %s: %w", plain, base))
	if l := leaks(err.Error()); len(l) > 0 {
		t.Errorf("%v leaks %q", err, l)
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("the API status is lost: %v", err)
	}
	if r.Error(nil) != nil {
		t.Error("Error(nil) should be nil")
	}
}

func TestRedactorPatch(t *testing.T) {
	tests := []struct {
		name string
		pt   types.PatchType
		in   string
		want string
	}{
		{"merge", types.MergePatchType, `{"data":{"password":"` + encoded + `"},"metadata":{"labels":{"a":"b"}}}`,
			`{"data":{"password":"` + Hash(encoded) + `"},"metadata":{"labels":{"a":"b"}}}`},
		{"apply yaml", types.ApplyPatchType, "apiVersion: v1\nkind: Secret\nstringData:\n  token: " + plain + "\n",
			`{"apiVersion":"v1","kind":"Secret","stringData":{"token":"` + Hash(plain) + `"}}`},
		{"json patch", types.JSONPatchType, `[` +
			`{"op":"test","path":"/data/password","value":"` + encoded + `"},` +
			`{"op":"replace","path":"/data","value":{"password":"` + encoded + `"}},` +
			`{"op":"add","path":"/stringData/token","value":"` + plain + `"},` +
			`{"op":"add","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"x"},` +
			`{"op":"add","path":"/metadata/labels/a","value":"b"},` +
			`{"op":"remove","path":"/data/old"},` +
			`{"op":"replace","path":"","value":{"data":{"password":"` + encoded + `"}}}]`,
			`[` +
				`{"op":"test","path":"/data/password","value":"` + Hash(encoded) + `"},` +
				`{"op":"replace","path":"/data","value":{"password":"` + Hash(encoded) + `"}},` +
				`{"op":"add","path":"/stringData/token","value":"` + Hash(plain) + `"},` +
				`{"op":"add","path":"/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration","value":"` + Hash("x") + `"},` +
				`{"op":"add","path":"/metadata/labels/a","value":"b"},` +
				`{"op":"remove","path":"/data/old"},` +
				`{"op":"replace","path":"","value":{"data":{"password":"` + Hash(encoded) + `"}}}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(false)
			if diff := cmp.Diff(tt.want, string(r.Patch(tt.pt, []byte(tt.in)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, v := range []string{plain, encoded} {
				if got := r.String("was " + v); strings.Contains(tt.in, v) && strings.Contains(got, v) {
					t.Errorf("the patch's value is not remembered: %s", got)
				}
			}
			if got := New(true).Patch(tt.pt, []byte(tt.in)); string(got) != tt.in {
				t.Errorf("show changed the patch: %s", got)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	u := &unstructured.Unstructured{Object: secret()}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	tests := []struct {
		name string
		v    any
		ok   bool
	}{
		{"unstructured Secret", u, false},
		{"unstructured value", *u, false},
		{"content", u.Object, false},
		{"list", &unstructured.UnstructuredList{Items: []unstructured.Unstructured{*cm, *u}}, false},
		{"typed", &corev1.Secret{}, false},
		{"ConfigMap", cm, true},
		{"guarded, stamped", guarded{New(false).Stamp()}, true},
		{"guarded, shown", guarded{New(true).Stamp()}, true},
		{"guarded, forgotten", guarded{}, false},
		{"report", struct{ A int }{1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.v)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrNotRedacted)) {
				t.Errorf("Check = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

type guarded struct{ s Stamp }

func (g guarded) CheckSecrets() error { return g.s.Require("test") }
