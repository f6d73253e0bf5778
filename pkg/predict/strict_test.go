package predict

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOfflineStrictRefusesUnknownFields: kubectl's apply, apply
// --server-side, replace and edit send fieldValidation=Strict, and the
// offline engine refuses a manifest with a field ConfigMap does not
// declare as the server does (the e2e test holds the words to the
// server's): a patch 422, a create or replace 400, the apply the field
// manager's 500. The HTTP methods send none: the field is dropped.
func TestOfflineStrictRefusesUnknownFields(t *testing.T) {
	desired := cmManifest(map[string]any{"a": "2"})
	desired.Object["datta"] = map[string]any{"b": "2"}
	type row struct {
		Method Method
		Code   int
		Reason string
	}
	predictRows := func(methods []Method, live bool) []row {
		t.Helper()
		ex, err := newOffline(nil).Executor(cmGVK, "cm", nil)
		if live {
			ex, err = newOffline(nil).Executor(cmGVK, "cm", liveCM(t, true, nil))
		}
		if err != nil {
			t.Fatal(err)
		}
		res, err := Predict(context.Background(), Config{Methods: methods}, Input{Desired: desired}, ex)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, m := range res.Methods {
			out = append(out, row{m.Method, m.Code, m.Reason})
		}
		return out
	}
	const bad = `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"`
	const patchBad = `strict decoding error: unknown field "datta"`
	got := predictRows([]Method{ClientApply, ServerSideApply, Replace, Edit, Update, MergePatch}, true)
	for i, want := range []struct {
		code   int
		reason string
	}{
		{422, patchBad}, {500, ".datta: field not declared in schema"}, {400, bad}, {422, patchBad}, {200, ""}, {200, ""},
	} {
		if got[i].Code != want.code || !strings.Contains(got[i].Reason, want.reason) {
			t.Errorf("%s: %d %q, want %d with %q", got[i].Method, got[i].Code, got[i].Reason, want.code, want.reason)
		}
	}
	// kubectl --validate=warn or =false: the field is dropped.
	for _, v := range []string{"warn", "false"} {
		fv, err := ParseKubectlValidate(v)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := newOffline(nil).Executor(cmGVK, "cm", liveCM(t, true, nil))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Predict(context.Background(), Config{Methods: []Method{ClientApply, Replace, Edit}, KubectlValidation: fv}, Input{Desired: desired}, ex)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Methods {
			if m.Code != 200 {
				t.Errorf("--validate=%s: %s %d %q, want 200", v, m.Method, m.Code, m.Reason)
			}
		}
	}
	// kubectl apply of an object that does not exist creates it: 400.
	if diff := cmp.Diff([]row{{ClientApply, 400, bad}}, predictRows([]Method{ClientApply}, false)); diff != "" {
		t.Errorf("client-apply's create (-want +got):\n%s", diff)
	}
}

func TestParseKubectlValidate(t *testing.T) {
	for in, want := range map[string]string{"strict": "Strict", "true": "Strict", "warn": "Warn", "ignore": "Ignore", "false": "Ignore", "Strict": "Strict"} {
		if got, err := ParseKubectlValidate(in); got != want || err != nil {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKubectlValidate("yes"); err == nil {
		t.Error(`"yes": no error`)
	}
}
