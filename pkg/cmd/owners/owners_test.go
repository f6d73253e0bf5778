package owners

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func newOwnersOptions(file string) (*OwnersOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	sel := cmdutil.NewSelectionFlags(true)
	sel.Filenames = []string{file}
	o := &OwnersOptions{
		Selection: sel,
		Output:    cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML),
		View:      ViewTree,
		Time:      "relative",
		now:       func() time.Time { return time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC) },
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
	}
	return o, &out, &errOut
}

const hazardsFile = "../../managedfields/testdata/hazards.yaml"

func TestOwnersValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*OwnersOptions)
		want string
	}{
		{"bad view", func(o *OwnersOptions) { o.View = "graph" }, `--view "graph" is not supported`},
		{"bad field", func(o *OwnersOptions) { o.Field = ".spec[" }, "--field: invalid field path"},
		{"bad output", func(o *OwnersOptions) { o.Output.Output = "name" }, `--output "name"`},
		{"nothing selected", func(o *OwnersOptions) { o.Selection.Filenames = nil }, "say what to look at"},
		{"empty expected manager", func(o *OwnersOptions) { o.expectManagerSet = true }, "--expect-manager needs a manager name; to expect each object's main applier, use --drift"},
		{"--include-status without a drift flag", func(o *OwnersOptions) { o.IncludeStatus = true }, "--include-status applies to the drift check: add --expect-manager NAME or --drift"},
		{"--include-scale without a drift flag", func(o *OwnersOptions) { o.IncludeScale = true }, "--include-scale applies to the drift check: add --expect-manager NAME or --drift"},
		{"size with a filter", func(o *OwnersOptions) { o.View = ViewSize; o.Shared = true }, "--view size weighs whole objects"},
		{"negative top", func(o *OwnersOptions) { o.View = ViewSize; o.Top = -1 }, "--top must be 0 or positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _ := newOwnersOptions(hazardsFile)
			tc.set(o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Classify(err) != exitcode.CodeUsage {
				t.Fatalf("Validate = %v (exit %d), want a usage error mentioning %q", err, exitcode.Classify(err), tc.want)
			}
		})
	}
}

func TestOwnersRunOffline(t *testing.T) {
	for _, tc := range []struct {
		name       string
		set        func(*OwnersOptions)
		code       int
		wantOut    []string
		wantErrOut string
	}{
		{"tree", func(*OwnersOptions) {}, 0, []string{"Widget default/w", "argocd (Apply, 5h)", "hazards:"}, ""},
		{"fail on hazard", func(o *OwnersOptions) { o.FailOnHazard = true }, 1, []string{"GenericManager"}, ""},
		{"no hazard selected", func(o *OwnersOptions) { o.FailOnHazard = true; o.Field = ".spec.steps[0]" }, 0, []string{"[0].run"}, ""},
		{"nothing matches", func(o *OwnersOptions) { o.Manager = "nobody" }, 0, []string{"no owned fields match"}, `no field owned by manager "nobody" was found`},
		{"summary", func(o *OwnersOptions) { o.View = ViewSummary }, 0, []string{"MANAGER", "ancient-changes"}, ""},
		{"json", func(o *OwnersOptions) { o.Output.Output = "json" }, 0, []string{`"kind": "OwnersReport"`, `"elements": [`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, errOut := newOwnersOptions(hazardsFile)
			tc.set(o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if code := exitcode.Classify(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut.String(), tc.wantErrOut) {
				t.Errorf("stderr = %q, want %q", errOut, tc.wantErrOut)
			}
		})
	}
}

func TestOwnersRunBadFileWritesNothing(t *testing.T) {
	o, out, _ := newOwnersOptions("../../managedfields/testdata/no-such-file.yaml")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	if exitcode.Classify(err) != exitcode.CodeUsage || out.Len() != 0 {
		t.Fatalf("want exit 2 and no output, got %v and %q", err, out)
	}
}

// TestOwnersReadsPipedStdin runs owners without arguments or -f, its
// standard input a pipe (or a file): it reads the objects from there, and
// an empty input is bad input (exit 2), never an empty success.
func TestOwnersReadsPipedStdin(t *testing.T) {
	data, err := os.ReadFile(hazardsFile)
	if err != nil {
		t.Fatal(err)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for _, tc := range []struct {
		name    string
		in      io.Reader
		code    int
		wantOut string
		wantErr string
	}{
		{"objects piped in", bytes.NewReader(data), 0, "Widget default/w", ""},
		{"empty pipe", strings.NewReader(""), exitcode.CodeUsage, "", "standard input was empty"},
		{"blank pipe", strings.NewReader("\n\n"), exitcode.CodeUsage, "", "standard input was empty"},
		{"/dev/null", devNull, exitcode.CodeUsage, "", "standard input was empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, _ := newOwnersOptions("")
			o.Selection.Filenames = nil
			o.In = tc.in
			if err := o.Complete(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if code := exitcode.Classify(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want it to say %q", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantOut) || (tc.wantOut == "" && out.Len() > 0) {
				t.Errorf("stdout = %q, want %q", out, tc.wantOut)
			}
		})
	}
}

func TestOwnersTimeFlag(t *testing.T) {
	for _, tc := range []struct {
		time    string
		code    int
		wantOut string
		wantErr string
	}{
		{"relative", 0, "argocd (Apply, 5h)", ""},
		{"full", 0, "argocd (Apply, 2026-11-21T11:00:00Z)", ""},
		{"none", 0, "argocd (Apply)\n", ""},
		{"absolute", exitcode.CodeUsage, "", `--time "absolute" is not supported: use one of relative, full, none`},
	} {
		t.Run(tc.time, func(t *testing.T) {
			o, out, _ := newOwnersOptions(hazardsFile)
			o.Time = tc.time
			err := o.Validate()
			if err == nil {
				err = o.Run(context.Background())
			}
			if code := exitcode.Classify(err); code != tc.code || (tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("exit %d (%v), want %d %q", code, err, tc.code, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantOut, out)
			}
		})
	}
}

func TestOwnersExplainsClockSkewOnce(t *testing.T) {
	o, out, errOut := newOwnersOptions(hazardsFile)
	o.now = func() time.Time { return time.Date(2026, 11, 21, 10, 55, 0, 0, time.UTC) }
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "argocd (Apply, in 5m (clock skew))") {
		t.Errorf("stdout:\n%s", out)
	}
	const want = "note: 2 managedFields entries were written up to 35m after this machine's clock"
	if strings.Count(errOut.String(), "note:") != 1 || !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr = %q, want one note %q", errOut, want)
	}
}

func TestOwnersDrift(t *testing.T) {
	const deployment = "../../managedfields/testdata/deployment.yaml"
	for _, tc := range []struct {
		name     string
		file     string
		set      func(*OwnersOptions)
		code     int
		wantOut  []string
		wantErr  string
		wantNote string
	}{
		{"named manager", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a" }, 1,
			[]string{".metadata.labels.team", "EXPECTED"}, "29 fields owned by a manager other than the expected one",
			`note: Deployment golden/web: 18 fields written through the status subresource left out (controllers report status there): --include-status counts them`},
		{"named manager, /scale left out", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a" }, 1,
			nil, "", `note: Deployment golden/web: 1 field written through the scale subresource left out (an autoscaler or kubectl scale sets replicas there): --include-scale counts them`},
		{"named manager, /status included", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a"; o.IncludeStatus = true }, 1,
			[]string{".status.replicas", "kube-controller-manager"}, "47 fields owned by a manager other than the expected one", ""},
		{"named manager, /scale included", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a"; o.IncludeScale = true }, 1,
			[]string{".spec.replicas", "kubectl                     Update      scale"}, "30 fields owned by a manager other than the expected one", ""},
		{"inferred", deployment, func(o *OwnersOptions) { o.Drift = true }, 1,
			[]string{".metadata.labels.team"}, "owned by a manager other than the expected one", `note: Deployment golden/web: expecting its main applier "team-a"`},
		{"narrowed to a field nobody else owns", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a"; o.Field = ".metadata.labels.owner" }, 0,
			nil, "", `no field is owned by a manager other than "team-a"`},
		{"json", deployment, func(o *OwnersOptions) { o.ExpectManager = "team-a"; o.Output.Output = "json" }, 1,
			[]string{`"drift": {`, `"expectedManager": "team-a"`, `"statusFieldsLeftOut": 18`, `"scaleFieldsLeftOut": 1`}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, out, errOut := newOwnersOptions(tc.file)
			tc.set(o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if code := exitcode.Classify(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.code)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want %q", err, tc.wantErr)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut.String(), tc.wantNote) {
				t.Errorf("stderr = %q, want %q", errOut, tc.wantNote)
			}
		})
	}
}

func TestOwnersSizeView(t *testing.T) {
	o, out, _ := newOwnersOptions(hazardsFile)
	o.Selection.Filenames = append(o.Selection.Filenames, "../../managedfields/testdata/deployment.yaml")
	o.View = ViewSize
	o.Top = 1
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KIND", "MANAGEDFIELDS BYTES", "Deployment.apps", "Widget.example.com", "HEAVIEST 1 BY MANAGEDFIELDS BYTES", "golden      Deployment.apps/web   3075"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("size view lacks %q:\n%s", want, out)
		}
	}
	o, out, _ = newOwnersOptions(hazardsFile)
	o.View = ViewSize
	o.Top = 10
	o.Output.Output = "json"
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"apiVersion": "rv.kubectl-rv.dev/v1alpha1"`, `"kind": "OwnersSizeReport"`, `"ancientChanges": true`, `"managedFieldsBytes": `} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("size -o json lacks %q:\n%s", want, out)
		}
	}
	o, _, _ = newOwnersOptions(hazardsFile)
	o.View = ViewSize
	o.Manager = "argocd"
	if err := o.Validate(); exitcode.Classify(err) != exitcode.CodeUsage || !strings.Contains(err.Error(), "--view size weighs whole objects") {
		t.Errorf("--view size --manager: %v", err)
	}
}
