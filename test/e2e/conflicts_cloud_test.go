//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/cloudexport"
)

// TestConflictsCloudExports: the busy scene's real audit log as GKE's Cloud
// Logging (gcloud logging read --format=json, Google's AuditLog in
// protoPayload, without bodies as a Metadata-level rule logs it) and AKS's
// Log Analytics (az monitor log-analytics query over AKSAudit) would hand
// it out gives the report of the same log without what each shape cannot
// carry, and every 409 of the log stays a 409. AKS's rows lack only the
// impersonated user, which the scene does not use: its report is the
// plain log's.
func TestConflictsCloudExports(t *testing.T) {
	s := sharedBusyScene(t)
	raw, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	report := func(path string) string {
		t.Helper()
		r := cluster.RV(t, "conflicts", "--audit-log", path, "-n", s.ns, "--view", "writers", "-o", "json")
		if r.Code != 0 || !strings.Contains(r.Stdout, `"conflicts": `) {
			t.Fatalf("%s: %s", path, r)
		}
		return r.Stdout
	}
	gcloud, err := cloudexport.Gcloud(lines, false)
	if err != nil {
		t.Fatal(err)
	}
	az, err := cloudexport.Az(lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ shape, file string }{
		{cloudexport.ShapeGcloud, write("gcloud-logging-read.json", gcloud)},
		{cloudexport.ShapeAz, write("az-aksaudit.json", az)},
	} {
		lacking, err := cloudexport.Lacking(lines, tc.shape)
		if err != nil {
			t.Fatal(err)
		}
		want := report(write(tc.shape+"-lacking.log", []byte(strings.Join(lacking, "\n")+"\n")))
		got := report(tc.file)
		if a, b := dropInput(t, want), dropInput(t, got); a != b {
			t.Errorf("%s gives another report than the log without what it lacks:\nlog:    %s\nexport: %s", tc.shape, a, b)
		}
		var rep struct {
			Summary struct{ Conflicts, DryRuns int }
		}
		if err := json.Unmarshal([]byte(got), &rep); err != nil {
			t.Fatal(err)
		}
		// gcloud cannot tell a dry run (no request URI): its 409s count as
		// writes there.
		want409, dry409 := log409s(t, lines, s.ns)
		if tc.shape == cloudexport.ShapeGcloud {
			want409 += dry409
		}
		if rep.Summary.Conflicts != want409 || want409 == 0 {
			t.Errorf("%s: %d 409s in the report, the log has %d", tc.shape, rep.Summary.Conflicts, want409)
		}
	}
	if a, b := dropInput(t, report(s.log)), dropInput(t, report(filepath.Join(dir, "az-aksaudit.json"))); a != b {
		t.Errorf("az's report differs from the plain log's:\nplain: %s\naz:    %s", a, b)
	}
	for name, b := range map[string][]byte{"gcloud": gcloud, "az": az} {
		cut := write(name+"-cut.json", b[:len(b)/2])
		if r := cluster.RV(t, "conflicts", "--audit-log", cut); r.Code != 2 || !strings.Contains(r.Stderr, cut+":") || !strings.Contains(r.Stderr, "output: an entry is cut short") {
			t.Errorf("a cut %s export: want exit 2 naming the file and line, got %s", name, r)
		}
	}
}

// log409s counts the log's 409s of writes to named objects of ns, apart
// from dry runs'.
func log409s(t *testing.T, lines []string, ns string) (writes, dryRuns int) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range lines {
		var e struct {
			AuditID, Stage, Verb, RequestURI string
			ObjectRef                        struct{ Namespace, Name string }
			ResponseStatus                   struct{ Code int }
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Stage != "ResponseComplete" || seen[e.AuditID] {
			continue
		}
		seen[e.AuditID] = true
		if e.ObjectRef.Namespace != ns || e.ResponseStatus.Code != 409 || !slices.Contains([]string{"create", "update", "patch", "delete"}, e.Verb) {
			continue
		}
		if strings.Contains(e.RequestURI, "dryRun=") {
			dryRuns++
		} else {
			writes++
		}
	}
	return writes, dryRuns
}
