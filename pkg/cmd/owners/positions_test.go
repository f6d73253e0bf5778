package owners

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
)

// webDump is a Deployment as kubectl get -o yaml --show-managed-fields
// prints it: ci applied it, an autoscaler (hpa-controller) set replicas
// through /scale, and someone's kubectl edit added the sidecar container.
const webDump = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  managedFields:
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                .: {}
                f:image: {}
                f:name: {}
    manager: ci
    operation: Apply
    time: "2026-11-21T15:00:00Z"
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:replicas: {}
    manager: hpa-controller
    operation: Update
    subresource: scale
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              k:{"name":"sidecar"}:
                .: {}
                f:image: {}
                f:name: {}
    manager: kubectl-edit
    operation: Update
    time: "2026-11-21T15:30:00Z"
spec:
  replicas: 4
  template:
    spec:
      containers:
      - name: web
        image: web:1
      - name: sidecar
        image: proxy:2
`

// webDumpJSON is webDump as JSON, each container on one line.
const webDumpJSON = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "web",
    "namespace": "shop",
    "managedFields": [
      {"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "ci", "operation": "Apply", "time": "2026-11-21T15:00:00Z",
       "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}},
      {"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "hpa-controller", "operation": "Update", "subresource": "scale",
       "fieldsV1": {"f:spec": {"f:replicas": {}}}},
      {"apiVersion": "apps/v1", "fieldsType": "FieldsV1", "manager": "kubectl-edit", "operation": "Update", "time": "2026-11-21T15:30:00Z",
       "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}}
    ]
  },
  "spec": {
    "replicas": 4,
    "template": {
      "spec": {
        "containers": [
          {"name": "web", "image": "web:1"},
          {"name": "sidecar", "image": "proxy:2"}
        ]
      }
    }
  }
}
`

// posOf is "LINE:COLUMN" of the first occurrence of needle in text, the
// column off characters after its start (ASCII text).
func posOf(t *testing.T, text, needle string, off int) string {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if c := strings.Index(l, needle); c >= 0 {
			return fmt.Sprintf("%d:%d", i+1, c+off+1)
		}
	}
	t.Fatalf("%q is not in the text", needle)
	return ""
}

// indent indents every line of s but the first by n spaces.
func indent(s string, n int) string {
	return strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+strings.Repeat(" ", n)) + "\n"
}

// positionInput is webDump in one of the shapes owners -f reads, and
// where its fields are: .spec.replicas at its key, the web container at its
// `- name: web` line (a JSON item at its brace), the sidecar's name at its
// key, each "LINE:COLUMN".
type positionInput struct {
	name, file, text       string
	replicas, web, sidecar string
}

func positionInputs(t *testing.T) []positionInput {
	multi := `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
  managedFields:
  - {apiVersion: v1, fieldsType: FieldsV1, manager: ci, operation: Apply, fieldsV1: {"f:data": {"f:a": {}}}}
data: {a: b}
---
` + webDump
	list := "apiVersion: v1\nkind: List\nitems:\n- " + indent(webDump, 2)
	inYAML := func(name, file, text string) positionInput {
		return positionInput{name, file, text, posOf(t, text, "replicas: 4", 0), posOf(t, text, "- name: web", 2), posOf(t, text, "- name: sidecar", 2)}
	}
	return []positionInput{
		inYAML("yaml", "web.yaml", webDump),
		{"json", "web.json", webDumpJSON, posOf(t, webDumpJSON, `"replicas": 4`, 0), posOf(t, webDumpJSON, `{"name": "web"`, 0), posOf(t, webDumpJSON, `"name": "sidecar"`, 0)},
		inYAML("multi-document", "all.yaml", multi),
		inYAML("list", "list.yaml", list),
	}
}

// ownersInDir runs kubectl rv owners ARGS in dir, as a CI job runs it in
// its checkout.
func ownersInDir(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Chdir(dir)
	return cmdtest.Run(t, []cmdtest.NewCmd{NewCmdOwners}, append([]string{"owners"}, args...)...)
}

// TestOwnersFilePositionsInJSON: -o json gives each field of an object
// read with -f its line and column in the file, in YAML, JSON, a
// multi-document file and a List: .spec.replicas at its key, a list item
// keyed by name at its `- name: web` line; and the drift fields too.
func TestOwnersFilePositionsInJSON(t *testing.T) {
	for _, in := range positionInputs(t) {
		t.Run(in.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, in.file), []byte(in.text), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := ownersInDir(t, dir, "-f", in.file, "--expect-manager", "ci", "--include-scale", "-o", "json")
			if code != 1 {
				t.Fatalf("exit %d, want 1 (drift)\n%s%s", code, out, errOut)
			}
			type field struct {
				Path         string
				Line, Column int
			}
			var rep struct {
				Items []struct {
					Kind   string
					Fields []field
					Drift  *struct{ Fields []field }
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			got := map[string]string{}
			for _, it := range rep.Items {
				if it.Kind != "Deployment" {
					continue
				}
				for _, f := range it.Fields {
					got[f.Path] = fmt.Sprintf("%d:%d", f.Line, f.Column)
				}
				for _, f := range it.Drift.Fields {
					got["drift "+f.Path] = fmt.Sprintf("%d:%d", f.Line, f.Column)
				}
			}
			want := map[string]string{
				".spec.replicas": in.replicas,
				`.spec.template.spec.containers[name="web"]`:                in.web,
				`.spec.template.spec.containers[name="sidecar"].name`:       in.sidecar,
				"drift .spec.replicas":                                      in.replicas,
				`drift .spec.template.spec.containers[name="sidecar"].name`: in.sidecar,
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					delete(got, k)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("positions (-want +got):\n%s\n%s", diff, out)
			}
		})
	}
}

// TestOwnersFilePositionsWide: -o wide adds the POSITION column,
// FILE:LINE:COLUMN, to the drift table (and the table view).
func TestOwnersFilePositionsWide(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(webDump), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := ownersInDir(t, dir, "-f", "web.yaml", "--expect-manager", "ci", "--include-scale", "-o", "wide")
	replicas := "web.yaml:" + posOf(t, webDump, "replicas: 4", 0)
	if code != 1 || !strings.Contains(out, "POSITION") || !strings.Contains(out, replicas) {
		t.Errorf("drift -o wide: exit %d, want 1 and a POSITION column with %s\n%s%s", code, replicas, out, errOut)
	}
	out, errOut, code = ownersInDir(t, dir, "-f", "web.yaml", "--view", "table", "-o", "wide")
	web := "web.yaml:" + posOf(t, webDump, "- name: web", 2)
	if code != 0 || !strings.Contains(out, "POSITION") || !strings.Contains(out, web) {
		t.Errorf("table -o wide: exit %d, want 0 and a POSITION column with %s\n%s%s", code, web, out, errOut)
	}
	out, _, _ = ownersInDir(t, dir, "-f", "web.yaml", "--view", "table")
	if strings.Contains(out, "POSITION") {
		t.Errorf("the table without -o wide has a POSITION column:\n%s", out)
	}
}

// TestOwnersCIFormatsAtTheReplicasLine: with the drift check, a field
// another manager owns is an error at its line in every CI format, and
// the exit code is the table's.
func TestOwnersCIFormatsAtTheReplicasLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.yaml"), []byte(webDump), 0o644); err != nil {
		t.Fatal(err)
	}
	n := posOf(t, webDump, "replicas: 4", 0)
	line, _, _ := strings.Cut(n, ":")
	args := []string{"-f", "web.yaml", "--expect-manager", "ci", "--include-scale"}

	gh, errOut, code := ownersInDir(t, dir, append(args, "-o", "github")...)
	want := fmt.Sprintf(`::error file=web.yaml,line=%s,col=3,title=drift%%3A Deployment/shop/web drift from "ci"::.spec.replicas is owned by hpa-controller (Update/scale), not by "ci"`, line)
	if code != 1 || !strings.Contains(gh, want) {
		t.Errorf("-o github: exit %d, want 1 and\n%s\ngot:\n%s%s", code, want, gh, errOut)
	}

	sarif, _, code := ownersInDir(t, dir, append(args, "-o", "sarif")...)
	if err := sarifcheck.Validate([]byte(sarif)); err != nil || code != 1 {
		t.Errorf("-o sarif: exit %d, %v", code, err)
	}
	if !strings.Contains(sarif, `"startLine": `+line+",") {
		t.Errorf("-o sarif: no result at line %s\n%s", line, sarif)
	}

	junit, _, code := ownersInDir(t, dir, append(args, "-o", "junit")...)
	var rep junitread.Report
	if err := xml.Unmarshal([]byte(junit), &rep); err != nil || code != 1 || len(rep.Suites) != 1 || rep.Failures != 1 {
		t.Fatalf("-o junit: exit %d, %v, want 1 suite and 1 failure\n%s", code, err, junit)
	}
	c := rep.Suites[0].Cases[len(rep.Suites[0].Cases)-1]
	if c.Name != `drift from "ci"` || c.Failure == nil || c.Failure.Type != "owners/drift" ||
		!strings.HasPrefix(c.Failure.Text, "web.yaml:"+n+": error: .spec.replicas is owned by hpa-controller") {
		t.Errorf("-o junit: the drift case is %+v\n%s", c, junit)
	}
}

// TestOwnersCIHazardLevel: a hazard is a warning, and an error with
// --fail-on hazard, which also sets the exit code.
func TestOwnersCIHazardLevel(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		level string
		code  int
	}{
		{nil, "::warning ", 0},
		{[]string{"--fail-on", "hazard"}, "::error ", 1},
	} {
		out, errOut, code := cmdtest.Run(t, []cmdtest.NewCmd{NewCmdOwners}, append([]string{"owners", "-f", hazardsFile, "-o", "github"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.level+"file=") || !strings.Contains(out, "title=GenericManager") {
			t.Errorf("%v: exit %d, want %d and %sannotations of the hazards\n%s%s", tc.args, code, tc.code, tc.level, out, errOut)
		}
	}
}

// TestOwnersCIFormatsRefuseSizeView: --view size has no findings.
func TestOwnersCIFormatsRefuseSizeView(t *testing.T) {
	_, errOut, code := cmdtest.Run(t, []cmdtest.NewCmd{NewCmdOwners}, "owners", "-f", hazardsFile, "--view", "size", "-o", "sarif")
	if code != 2 || !strings.Contains(errOut, "--view size has none") {
		t.Errorf("exit %d, want 2 and a usage error\n%s", code, errOut)
	}
}
