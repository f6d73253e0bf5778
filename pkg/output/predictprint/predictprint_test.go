package predictprint

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

func sample() []predict.Result {
	return []predict.Result{{
		Object:              predict.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Source: "web.yaml:1"},
		Engine:              "server",
		FieldManager:        "ci",
		LiveResourceVersion: "252",
		BaseResourceVersion: "240",
		Stale:               true,
		Methods: []predict.MethodResult{
			{Method: predict.Update, Verdict: predict.Conflict, Code: 409, Reason: "Operation cannot be fulfilled"},
			{Method: predict.UpdateNoRV, Verdict: predict.Clobber, Code: 200, GenerationBumped: true,
				Clobbered:        []predict.Ownership{{Manager: "hpa", Operation: "Update", Fields: []string{".spec.replicas"}}},
				OwnershipChanges: []predict.OwnershipChange{{Manager: "ci", Operation: "Update", Gained: []string{".spec.replicas"}}, {Manager: "hpa", Operation: "Update", Lost: []string{".spec.replicas"}}},
				Changed:          []predict.FieldChange{{Path: ".spec.replicas", Change: "modified"}}},
			{Method: predict.JSONPatch, Verdict: predict.Invalid, Code: 422, Reason: "the JSON patch does not apply\nsecond line"},
			{Method: predict.MergePatch, Verdict: predict.OK, Code: 200, NoOp: true},
			{Method: predict.Apply, Verdict: predict.ApplyConflict, Code: 409,
				Conflicts: []managedfields.Conflict{{Field: ".spec.replicas", Manager: "hpa", Operation: "Update", APIVersion: "apps/v1"}}},
			{Method: predict.ApplyForce, Verdict: predict.Clobber, Code: 200, GenerationBumped: true,
				Clobbered: []predict.Ownership{{Manager: "hpa\x1b[31m", Operation: "Update", Fields: []string{".spec.replicas"}}}},
		},
	}}
}

func TestPrint(t *testing.T) {
	two := append(sample(), sample()...)
	two[1].Object.Name = "api"
	tests := []struct {
		name    string
		format  output.Format
		results []predict.Result
	}{
		{"one.txt", output.Table, sample()},
		{"one-wide.txt", output.Wide, sample()},
		{"many.txt", output.Table, two},
		{"one.json", output.JSON, sample()},
		{"one.yaml", output.YAML, sample()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			p := &output.Printer{Format: tt.format, Out: &out}
			if err := Print(p, &errOut, NewReport("server", tt.results)); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tt.name, out.Bytes())
			if !p.Structured() && !bytes.Contains(errOut.Bytes(), []byte("admission webhooks")) {
				t.Errorf("the webhook note is missing from the error stream: %q", errOut.String())
			}
		})
	}
}

// TestPrintRefusesUnredactedSecret checks that a Secret's result that has
// not been through predict's redaction is printed in no format.
func TestPrintRefusesUnredactedSecret(t *testing.T) {
	res := predict.Result{Object: predict.ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "sec", Name: "s1"}, Engine: "server",
		Methods: []predict.MethodResult{{Method: predict.MergePatch, Verdict: predict.OK, Code: 200, Request: `{"stringData":{"password":"hunter2"}}`}}}
	for _, f := range []output.Format{output.Table, output.Wide, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := Print(&output.Printer{Format: f, Out: &out}, &errOut, NewReport("server", []predict.Result{sample()[0], res}))
			if !errors.Is(err, redact.ErrNotRedacted) {
				t.Errorf("got %v, want ErrNotRedacted", err)
			}
			if out.Len() > 0 {
				t.Errorf("something was printed: %s", out.Bytes())
			}
		})
	}
}

// TestDetailSaysRemoved: a clobber's DETAIL says a field the write
// removes is removed, as its changed fields (the JSON) say, and one it
// overwrites is taken (#29).
func TestDetailSaysRemoved(t *testing.T) {
	tests := []struct {
		name string
		m    predict.MethodResult
		want string
	}{
		{"overwritten", predict.MethodResult{Verdict: predict.Clobber,
			Clobbered: []predict.Ownership{{Manager: "hpa", Fields: []string{".spec.replicas"}}},
			Changed:   []predict.FieldChange{{Path: ".spec.replicas", Change: "modified"}}},
			`takes .spec.replicas from "hpa"`},
		{"removed", predict.MethodResult{Verdict: predict.Clobber,
			Clobbered: []predict.Ownership{{Manager: "kubectl-create", Fields: []string{".metadata.labels.app"}}},
			Changed:   []predict.FieldChange{{Path: ".metadata.labels.app", Change: "removed"}}},
			`removes .metadata.labels.app from "kubectl-create"`},
		{"both, two managers", predict.MethodResult{Verdict: predict.Clobber,
			Clobbered: []predict.Ownership{
				{Manager: "a", Fields: []string{".data.k1", ".data.k2"}},
				{Manager: "b", Fields: []string{".data.k3"}}},
			Changed: []predict.FieldChange{{Path: ".data.k1", Change: "modified"}, {Path: ".data.k2", Change: "removed"}, {Path: ".data.k3", Change: "removed"}}},
			`takes .data.k1 from "a"; removes .data.k2 from "a"; removes .data.k3 from "b"`},
		{"client-apply deletes a field and takes one", predict.MethodResult{Verdict: predict.Clobber,
			ClientApply: &predict.ClientApplyResult{Action: predict.ActionPatch, Deleted: []string{".data.b"}},
			Clobbered:   []predict.Ownership{{Manager: "ctrl", Fields: []string{".data.a"}}},
			Changed:     []predict.FieldChange{{Path: ".data.a", Change: "modified"}, {Path: ".data.b", Change: "removed"}}},
			`deletes .data.b (left the manifest); takes .data.a from "ctrl"`},
		{"client-apply without the annotation", predict.MethodResult{Verdict: predict.OK,
			ClientApply: &predict.ClientApplyResult{Action: predict.ActionPatch, AnnotationMissing: true},
			Changed:     []predict.FieldChange{{Path: ".data.a", Change: "modified"}}},
			`no last-applied annotation: kubectl warns, deletes nothing and adds it; 1 field(s) change`},
		{"client-apply unchanged", predict.MethodResult{Verdict: predict.OK, NoOp: true,
			ClientApply: &predict.ClientApplyResult{Action: predict.ActionUnchanged}},
			`unchanged: the three-way patch is empty, kubectl sends nothing`},
		{"client-apply create", predict.MethodResult{Verdict: predict.OK, Code: 201,
			ClientApply: &predict.ClientApplyResult{Action: predict.ActionCreate}},
			`creates it with the last-applied annotation; 0 field(s) change`},
		{"apply on an object last applied client-side", predict.MethodResult{Verdict: predict.OK,
			Changed:    []predict.FieldChange{{Path: ".data.a", Change: "modified"}},
			CSAUpgrade: &predict.CSAUpgrade{Managers: []string{"kubectl-client-side-apply"}, Moved: []string{".data.a", ".data.b"}, Deleted: []string{".data.b"}}},
			`1 field(s) change; last applied client-side (kubectl-client-side-apply): the managedFields upgrade moves 2 field(s), then the apply deletes .data.b`},
		{"unknown", predict.MethodResult{Verdict: predict.Unknown, Reason: "the offline engine does not run the API server's defaulting and validation of Namespace v1; without them the write would be ok"},
			"the offline engine does not run the API server's defaulting and validation of Namespace v1; without them the write would be ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detail(predict.Result{}, tt.m); got != tt.want {
				t.Errorf("Detail = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestWideShowsReasonWhole: the table cuts a long reason of the server;
// -o wide and -o json show it whole.
func TestWideShowsReasonWhole(t *testing.T) {
	long := `Knob.predict.example.com "web" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1, ` +
		`spec.mode: Unsupported value: "x": supported values: "a", "b"`
	r := sample()
	r[0].Methods = []predict.MethodResult{{Method: predict.Update, Verdict: predict.Invalid, Code: 422, Reason: long}}
	for _, f := range []output.Format{output.Table, output.Wide, output.JSON} {
		var out, errOut bytes.Buffer
		if err := Print(&output.Printer{Format: f, Out: &out}, &errOut, NewReport("server", r)); err != nil {
			t.Fatal(err)
		}
		whole := bytes.Contains(out.Bytes(), []byte(`supported values: \"a\", \"b\"`)) || bytes.Contains(out.Bytes(), []byte(`supported values: "a", "b"`))
		if whole != (f != output.Table) {
			t.Errorf("-o %s: reason whole %v, want %v:\n%s", f, whole, f != output.Table, out.String())
		}
	}
}
