package predict

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// The values of the test Secrets: none may be printed without ShowSecrets.
const (
	oldPassword = "hunter2-old-value"
	newPassword = "hunter2-new-value"
	newToken    = "token-new-value"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// secretValues are the values and their base64 forms.
var secretValues = []string{oldPassword, newPassword, newToken, b64(oldPassword), b64(newPassword), b64(newToken)}

func leaks(s string) []string {
	var out []string
	for _, v := range secretValues {
		if strings.Contains(s, v) {
			out = append(out, v)
		}
	}
	return out
}

// liveSecret is the Secret s1 created by kubectl apply at RV 10, the old
// password in data and in the last-applied annotation.
func liveSecret(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	fm, err := managedfields.NewFieldManager(managedfields.BuiltinTypeConverter(), secretGVK)
	if err != nil {
		t.Fatal(err)
	}
	s := obj(t, `
apiVersion: v1
kind: Secret
metadata:
  name: s1
  namespace: sec
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"`+b64(oldPassword)+`"}}'
data: {password: `+b64(oldPassword)+`}
`)
	live, err := fm.Update(managedfields.NewEmpty(secretGVK), s, "kubectl-client-side-apply", "")
	if err != nil {
		t.Fatal(err)
	}
	live.SetUID("uid-s1")
	live.SetResourceVersion("10")
	return live
}

func desiredSecret(t testing.TB) *unstructured.Unstructured {
	return obj(t, `
apiVersion: v1
kind: Secret
metadata: {name: s1, namespace: sec}
data: {token: `+b64(newToken)+`}
stringData: {password: `+newPassword+`}
`)
}

func secretRef() ObjectRef {
	return ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "sec", Name: "s1"}
}

func predictSecret(t *testing.T, show bool, in Input, ex Executor) (Result, string, error) {
	t.Helper()
	res, err := Predict(context.Background(), Config{FieldManager: "ci", ShowSecrets: show}, in, ex)
	b, jerr := json.Marshal(res)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if !res.Secrets.Checked() || res.Secrets.Shown() != show || res.CheckSecrets() != nil {
		t.Errorf("stamp %+v, want checked, shown %v", res.Secrets, show)
	}
	return res, string(b), err
}

func offlineSecret(t *testing.T) Executor {
	t.Helper()
	ex, err := newOffline(nil).Executor(secretGVK, "s1", liveSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestPredictSecretRequests checks every method's request on a Secret: the
// new values (and the old ones a JSON patch tests) are hashed, unless
// ShowSecrets.
func TestPredictSecretRequests(t *testing.T) {
	in := Input{Ref: secretRef(), Desired: desiredSecret(t)}
	res, got, err := predictSecret(t, false, in, offlineSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(got); len(l) > 0 {
		t.Errorf("the result shows %q:\n%s", l, got)
	}
	for _, m := range res.Methods {
		if m.Method != Update && m.Method != UpdateNoRV && !strings.Contains(m.Request, "sha256:") {
			t.Errorf("%s: the request has no hash: %s", m.Method, m.Request)
		}
	}
	_, shown, err := predictSecret(t, true, in, offlineSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{newPassword, b64(newToken)} {
		if !strings.Contains(shown, v) {
			t.Errorf("ShowSecrets: the requests do not show %q:\n%s", v, shown)
		}
	}
}

// TestPredictSecretJSONPatchTest checks a given JSON patch whose test
// operation fails on the live Secret: neither the request nor the reason
// shows the values.
func TestPredictSecretJSONPatchTest(t *testing.T) {
	patch := fmt.Sprintf(`[{"op":"test","path":"/data/password","value":%q},{"op":"replace","path":"/data/password","value":%q}]`, b64(newToken), b64(newPassword))
	in := Input{Ref: secretRef(), Patch: []byte(patch), PatchType: PatchJSON}
	res, got, err := predictSecret(t, false, in, offlineSecret(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Methods) != 1 || res.Methods[0].Verdict != Invalid {
		t.Fatalf("want one invalid JSON patch, got %s", got)
	}
	if l := leaks(got); len(l) > 0 {
		t.Errorf("the result shows %q:\n%s", l, got)
	}
}

// echoExecutor answers every write with the errors a server or a library
// might write, quoting the request.
type echoExecutor struct {
	live *unstructured.Unstructured
	// api answers with a 422 (a result); else a plain error (Predict fails).
	api bool
}

func (e echoExecutor) Engine() string { return "echo" }

func (e echoExecutor) Live(context.Context) (*unstructured.Unstructured, error) { return e.live, nil }

func (e echoExecutor) Update(_ context.Context, obj *unstructured.Unstructured, _ Write) (*unstructured.Unstructured, error) {
	b, _ := obj.MarshalJSON()
	return nil, e.fail(string(b))
}

func (e echoExecutor) Patch(_ context.Context, _ types.PatchType, data []byte, _ Write) (*unstructured.Unstructured, error) {
	return nil, e.fail(string(data))
}

func (e echoExecutor) Create(_ context.Context, obj *unstructured.Unstructured, _ Write) (*unstructured.Unstructured, error) {
	b, _ := obj.MarshalJSON()
	return nil, e.fail(string(b))
}

func (e echoExecutor) fail(body string) error {
	if !e.api {
		return fmt.Errorf("decoding %s: illegal base64 data", body)
	}
	v := base64.StdEncoding.EncodeToString([]byte(oldPassword)) + " was " + body
	return apierrors.NewInvalid(secretGVK.GroupKind(), "s1", field.ErrorList{field.Invalid(field.NewPath("data", "password"), v, "illegal base64 data")})
}

// TestPredictSecretErrors checks that messages quoting the request or the
// live object (a validation message, an invalid base64 value) are redacted
// in reasons and in errors, which keep their API status.
func TestPredictSecretErrors(t *testing.T) {
	desired := desiredSecret(t)
	desired.Object["data"] = map[string]any{"token": newToken + "!not base64"}
	in := Input{Ref: secretRef(), Desired: desired}
	res, got, err := predictSecret(t, false, in, echoExecutor{live: liveSecret(t), api: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(got); len(l) > 0 {
		t.Errorf("the result shows %q:\n%s", l, got)
	}
	if res.Methods[0].Verdict != Invalid {
		t.Errorf("want invalid, got %s", got)
	}
	_, _, err = predictSecret(t, false, in, echoExecutor{live: liveSecret(t)})
	if err == nil {
		t.Fatal("want an error")
	}
	if l := leaks(err.Error()); len(l) > 0 {
		t.Errorf("the error shows %q: %v", l, err)
	}
	_, _, err = predictSecret(t, true, in, echoExecutor{live: liveSecret(t)})
	if err == nil || !strings.Contains(err.Error(), newPassword) {
		t.Errorf("ShowSecrets: the error should quote the request: %v", err)
	}
}

// TestPredictSecretOfflineInvalidBase64 checks the offline write path's
// own answer to an invalid base64 value: a verdict or an error, neither
// quoting a value.
func TestPredictSecretOfflineInvalidBase64(t *testing.T) {
	desired := desiredSecret(t)
	desired.Object["data"] = map[string]any{"token": newToken + "!"}
	_, got, err := predictSecret(t, false, Input{Ref: secretRef(), Desired: desired}, offlineSecret(t))
	if err != nil {
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			t.Fatalf("an API status should be a verdict: %v", err)
		}
		if l := leaks(err.Error()); len(l) > 0 {
			t.Errorf("the error shows %q: %v", l, err)
		}
		return
	}
	if l := leaks(got); len(l) > 0 {
		t.Errorf("the result shows %q:\n%s", l, got)
	}
}

// TestResultCheckSecrets checks the printer's guard: a Secret's result
// that did not go through Predict's redaction is refused.
func TestResultCheckSecrets(t *testing.T) {
	if err := (Result{Object: secretRef()}).CheckSecrets(); !errors.Is(err, redact.ErrNotRedacted) {
		t.Errorf("an unstamped Secret result: %v, want ErrNotRedacted", err)
	}
	if err := (Result{Object: ObjectRef{APIVersion: "apps/v1", Kind: "Deployment"}}).CheckSecrets(); err != nil {
		t.Errorf("a Deployment needs no stamp: %v", err)
	}
}
