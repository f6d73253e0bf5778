package krew

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

// fakeValues are release values for every platform, as hack/release.sh
// computes them.
func fakeValues(version string) Values {
	v := Values{Version: version, Artifacts: map[string]Artifact{}}
	for _, p := range Platforms {
		os, arch, _ := strings.Cut(p, "/")
		ext := ".tar.gz"
		if os == "windows" {
			ext = ".zip"
		}
		sum := sha256.Sum256([]byte(p))
		v.Artifacts[p] = Artifact{
			URI:    "https://github.com/kubectl-rv/kubectl-rv/releases/download/" + version + "/kubectl-rv_" + version + "_" + os + "_" + arch + ext,
			SHA256: hex.EncodeToString(sum[:]),
		}
	}
	return v
}

func renderTemplate(t *testing.T, version string) *Manifest {
	t.Helper()
	tmpl, err := os.ReadFile("rv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(tmpl, fakeValues(version))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if bytes.Contains(out, []byte("{{")) {
		t.Fatalf("rendered manifest still holds template actions:\n%s", out)
	}
	m, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse of the rendered manifest: %v\n%s", err, out)
	}
	return m
}

func TestTemplateRendersToAValidManifest(t *testing.T) {
	for _, version := range []string{"v0.1.0", "v1.2.3-rc.1", "v0.0.0-dev"} {
		t.Run(version, func(t *testing.T) {
			m := renderTemplate(t, version)
			if err := Validate(m, "rv.yaml"); err != nil {
				t.Fatalf("the rendered template breaks krew's rules:\n%v", err)
			}
			if m.Spec.Version != version {
				t.Errorf("spec.version = %q, want %q", m.Spec.Version, version)
			}
			want := fakeValues(version)
			for _, p := range m.Spec.Platforms {
				key := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
				if diff := cmp.Diff(want.Artifacts[key], Artifact{URI: p.URI, SHA256: p.SHA256}); diff != "" {
					t.Errorf("%s artifact (-want +got):\n%s", key, diff)
				}
			}
		})
	}
}

func TestTemplateItselfIsYAML(t *testing.T) {
	// The template quotes its actions, so editors and linters can read it.
	tmpl, err := os.ReadFile("rv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(tmpl); err != nil {
		t.Fatalf("krew/rv.yaml is not YAML before rendering: %v", err)
	}
}

func TestDescriptionsSayWhatRVIsAndListTheCommands(t *testing.T) {
	m := renderTemplate(t, "v0.1.0")
	sd := m.Spec.ShortDescription
	if !strings.Contains(sd, "rv") || !strings.Contains(sd, "resourceVersion") {
		t.Errorf("shortDescription %q should say that rv stands for resourceVersion", sd)
	}
	root := cmd.NewCmdRV(genericiooptions.NewTestIOStreamsDiscard())
	for _, c := range root.Commands() {
		if !strings.Contains(m.Spec.Description, "kubectl rv "+c.Name()+" ") {
			t.Errorf("description does not describe the command %q", "kubectl rv "+c.Name())
		}
	}
}

func TestCaveatsExplainCompletion(t *testing.T) {
	m := renderTemplate(t, "v0.1.0")
	for _, want := range []string{"kubectl_complete-rv", "__complete", `"${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-rv"`, "chmod +x", "1.26"} {
		if !strings.Contains(m.Spec.Caveats, want) {
			t.Errorf("caveats should mention %q:\n%s", want, m.Spec.Caveats)
		}
	}
}

// TestCaveatsGiveTheCompletionHelpsCommands: the caveats and kubectl rv
// completion --help tell krew users the same commands, word for word.
func TestCaveatsGiveTheCompletionHelpsCommands(t *testing.T) {
	m := renderTemplate(t, "v0.1.0")
	var help bytes.Buffer
	root := cmd.NewCmdRV(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &help, ErrOut: &help})
	root.SetArgs([]string{"completion", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(m.Spec.Caveats, "\n") {
		if l = strings.TrimSpace(l); strings.HasSuffix(l, `/bin/kubectl_complete-rv"`) {
			n++
			if !strings.Contains(help.String(), l+"\n") {
				t.Errorf("kubectl rv completion --help lacks the caveats' command\n  %s\n%s", l, help.String())
			}
		}
	}
	if n != 2 {
		t.Errorf("want the caveats' two commands that write the helper, found %d:\n%s", n, m.Spec.Caveats)
	}
}

func TestValidateRejectsEveryBrokenRule(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		mutate func(*Manifest)
		want   string
	}{
		{"wrong apiVersion", "rv.yaml", func(m *Manifest) { m.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" }, "apiVersion must be"},
		{"wrong kind", "rv.yaml", func(m *Manifest) { m.Kind = "plugin" }, "kind must be"},
		{"name differs from file", "other.yaml", func(*Manifest) {}, `must equal the file name "other"`},
		{"name with a dot", "r.v.yaml", func(m *Manifest) { m.Metadata.Name = "r.v" }, "must match"},
		{"name kubectl-rv", "kubectl-rv.yaml", func(m *Manifest) { m.Metadata.Name = "kubectl-rv" }, "must not start with kubectl"},
		{"version without v", "rv.yaml", func(m *Manifest) { m.Spec.Version = "0.1.0" }, "semantic version with a v prefix"},
		{"version not semver", "rv.yaml", func(m *Manifest) { m.Spec.Version = "v0.1" }, "semantic version with a v prefix"},
		{"version leading zero", "rv.yaml", func(m *Manifest) { m.Spec.Version = "v0.01.0" }, "semantic version with a v prefix"},
		{"no homepage", "rv.yaml", func(m *Manifest) { m.Spec.Homepage = "" }, "spec.homepage"},
		{"no shortDescription", "rv.yaml", func(m *Manifest) { m.Spec.ShortDescription = " " }, "shortDescription is required"},
		{"long shortDescription", "rv.yaml", func(m *Manifest) { m.Spec.ShortDescription = strings.Repeat("x", 51) }, "51 characters, at most 50"},
		{"two-line shortDescription", "rv.yaml", func(m *Manifest) { m.Spec.ShortDescription = "a\nb" }, "one line"},
		{"no description", "rv.yaml", func(m *Manifest) { m.Spec.Description = "" }, "description is required"},
		{"no platforms", "rv.yaml", func(m *Manifest) { m.Spec.Platforms = nil }, "at least one platform"},
		{"platform missing", "rv.yaml", func(m *Manifest) { m.Spec.Platforms = m.Spec.Platforms[1:] }, "no archive for linux/amd64"},
		{"platform twice", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[1].Selector.MatchLabels["arch"] = "amd64" }, "already selected by spec.platforms[0]"},
		{"extra label", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Selector.MatchLabels["libc"] = "musl" }, "matchLabels.libc: only os and arch"},
		{"matchExpressions", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Selector.MatchExpressions = []any{"x"} }, "matchExpressions is not used"},
		{"no arch", "rv.yaml", func(m *Manifest) { delete(m.Spec.Platforms[0].Selector.MatchLabels, "arch") }, "must set both os and arch"},
		{"http uri", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].URI = "http://example.com/a.tar.gz" }, "must be an https URL"},
		{"tar.xz uri", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].URI = "https://example.com/a.tar.xz" }, "archives are .tar.gz"},
		{"windows tar.gz", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[4].URI = "https://example.com/a.tar.gz" }, "windows archives are .zip"},
		{"upper-case sha256", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].SHA256 = strings.ToUpper(m.Spec.Platforms[0].SHA256) }, "64 lowercase hex digits"},
		{"short sha256", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].SHA256 = "abc" }, "64 lowercase hex digits"},
		{"no bin", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Bin = "" }, `bin must be "kubectl-rv"`},
		{"windows bin without .exe", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[4].Bin = "kubectl-rv" }, `bin must be "kubectl-rv.exe"`},
		{"licence not installed", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Files = m.Spec.Platforms[0].Files[:1] }, "files must install LICENSE"},
		{"binary not installed", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Files = m.Spec.Platforms[0].Files[1:] }, "files must install kubectl-rv"},
		{"file escapes", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Files[0].To = "../bin" }, "must stay inside"},
		{"empty file operation", "rv.yaml", func(m *Manifest) { m.Spec.Platforms[0].Files[0].From = "" }, "from and to are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := renderTemplate(t, "v0.1.0")
			tc.mutate(m)
			err := Validate(m, tc.file)
			if err == nil {
				t.Fatalf("Validate accepted a manifest with %s", tc.name)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate error should contain %q, got:\n%v", tc.want, err)
			}
		})
	}
}

func TestParseRejectsUnknownFields(t *testing.T) {
	_, err := Parse([]byte("apiVersion: x\nkind: Plugin\nspec:\n  shortDescriptionn: typo\n"))
	if err == nil || !strings.Contains(err.Error(), "shortDescriptionn") {
		t.Fatalf("Parse should reject the unknown field shortDescriptionn, got %v", err)
	}
}

func TestRenderNamesAMissingPlatform(t *testing.T) {
	_, err := Render([]byte(`uri: {{ uri "plan9/386" }}`), fakeValues("v0.1.0"))
	if err == nil || !strings.Contains(err.Error(), `no archive for platform "plan9/386"`) {
		t.Fatalf("want an error naming plan9/386, got %v", err)
	}
	_, err = Render([]byte(`{{ .Nope }}`), fakeValues("v0.1.0"))
	if err == nil {
		t.Fatal("Render accepted an unknown field")
	}
}

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.1.0": true, "v10.20.30": true, "v1.0.0-rc.1": true, "v1.0.0+build.5": true, "v0.0.0-dev": true,
		"0.1.0": false, "v1.0": false, "v1.0.0-": false, "v01.0.0": false, "v1.0.0-01": false, "": false, "V1.0.0": false,
	} {
		if got := ValidVersion(v); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

func FuzzParseValidate(f *testing.F) {
	tmpl, err := os.ReadFile("rv.yaml")
	if err != nil {
		f.Fatal(err)
	}
	rendered, err := Render(tmpl, fakeValues("v0.1.0"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rendered)
	f.Add(tmpl)
	f.Add([]byte("spec:\n  platforms:\n  - selector: {}\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		_ = Validate(m, "rv.yaml")
	})
}
