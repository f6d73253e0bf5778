package predict

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// refusingExecutor answers every write with err, the way a server answers
// a user who may only read, or the validation error of a patch.
type refusingExecutor struct {
	live *unstructured.Unstructured
	err  func(method string) error
}

func (e refusingExecutor) Engine() string { return "server" }

func (e refusingExecutor) Live(context.Context) (*unstructured.Unstructured, error) {
	return e.live, nil
}

func (e refusingExecutor) Update(context.Context, *unstructured.Unstructured, Write) (*unstructured.Unstructured, error) {
	return nil, e.err("update")
}

func (e refusingExecutor) Patch(_ context.Context, pt types.PatchType, _ []byte, _ Write) (*unstructured.Unstructured, error) {
	return nil, e.err(string(pt))
}

func (e refusingExecutor) Create(context.Context, *unstructured.Unstructured, Write) (*unstructured.Unstructured, error) {
	return nil, e.err("create")
}

// TestPredictForbiddenOnce: a user refused every method gets the refusal
// once, not once per method.
func TestPredictForbiddenOnce(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	ex := refusingExecutor{live: liveWeb(t), err: func(string) error {
		return apierrors.NewForbidden(gr, "web", nil)
	}}
	_, err := Predict(context.Background(), Config{FieldManager: "ci"}, Input{Desired: desiredWeb(t, "11", "nginx:2")}, ex)
	if !apierrors.IsForbidden(err) || strings.Count(err.Error(), "forbidden") != 1 {
		t.Errorf("Predict() = %v, want the refusal once", err)
	}
}

// TestPredictJSONPatchReasons: a JSON patch the server validates and
// rejects shows the server's reason; one that does not apply says why,
// from the library the server uses.
func TestPredictJSONPatchReasons(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{field.Required(field.NewPath("spec", "selector"), "")})
	notApplied := apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "test failed", 0, false)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"validation", invalid, `Deployment.apps "web" is invalid: spec.selector: Required value`},
		{"stale test", notApplied, "the JSON patch does not apply to the live object: testing value /metadata/resourceVersion failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := refusingExecutor{live: liveWeb(t), err: func(string) error { return tt.err }}
			// Base 10 is stale: the generated patch tests resourceVersion 10, the live object is at 11.
			res, err := Predict(context.Background(), Config{Methods: []Method{JSONPatch}}, Input{Desired: desiredWeb(t, "10", "nginx:2")}, ex)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Methods[0]; got.Verdict != Invalid || got.Reason != tt.want && !strings.HasPrefix(got.Reason, tt.want) {
				t.Errorf("json-patch = %s %q, want invalid %q", got.Verdict, got.Reason, tt.want)
			}
		})
	}
}

// TestPredictRefusalReasonCausesOnce: the server's message of a 422
// already holds its field errors, which Details.Causes repeat; a cause the
// message lacks (an admission webhook's own) is added to it.
func TestPredictRefusalReasonCausesOnce(t *testing.T) {
	gk := schema.GroupKind{Group: "predict.example.com", Kind: "Knob"}
	minimum := apierrors.NewInvalid(gk, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "size"), 0, "spec.size in body should be greater than or equal to 1")})
	webhook := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("denied by policy"))
	webhook.ErrStatus.Code, webhook.ErrStatus.Reason = http.StatusUnprocessableEntity, metav1.StatusReasonInvalid
	webhook.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.replicas", Message: "replicas must be odd"}}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"field error in the message", minimum, `Knob.predict.example.com "web" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`},
		{"cause not in the message", webhook, `deployments.apps "web" is forbidden: denied by policy: replicas must be odd`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := refusingExecutor{live: liveWeb(t), err: func(string) error { return tt.err }}
			res, err := Predict(context.Background(), Config{Methods: []Method{Update}}, Input{Desired: desiredWeb(t, "11", "nginx:2")}, ex)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Methods[0]; got.Verdict != Invalid || got.Reason != tt.want {
				t.Errorf("update = %s %q, want invalid %q", got.Verdict, got.Reason, tt.want)
			}
		})
	}
}
