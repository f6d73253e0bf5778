package conflicts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
)

// loopLog is an audit log of a client getting configmap a twice a second
// for 20 s, of a writer creating it each second, refused: it exists, and
// of two updates at Metadata level.
func loopLog(t *testing.T) string {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	line := func(n int, user, verb, uri string, code int) {
		at := t0.Add(time.Duration(n) * 500 * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"%s-%d","stage":"ResponseComplete","verb":"%s","requestURI":"%s","user":{"username":"%s"},"userAgent":"%s/v1","objectRef":{"resource":"configmaps","namespace":"ns","name":"a"},"responseStatus":{"code":%d,"reason":"%s"},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}`+"\n",
			user, n, verb, uri, user, user, code, map[int]string{409: "AlreadyExists"}[code], at, at)
	}
	for n := range 40 {
		line(n, "looper", "get", "/api/v1/namespaces/ns/configmaps/a", 200)
		if n%2 == 0 {
			line(n, "creator", "create", "/api/v1/namespaces/ns/configmaps", 409)
		}
		if n == 1 || n == 3 {
			line(n, "updater", "update", "/api/v1/namespaces/ns/configmaps/a", 200)
		}
	}
	return cmdtest.FileWriter(t, t.TempDir())("audit.log", b.String())
}

// TestConflictsViewTop: --view top counts reads as well as writes, by
// nested keys; --view wasted counts the refused creates; --fail-on exits
// 1 on a loop at --hot-rate or faster only.
func TestConflictsViewTop(t *testing.T) {
	log := loopLog(t)
	out, errOut, code := run(t, "conflicts", "--audit-log", log, "--view", "top", "--by", "user", "--by", "verb", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind   string
		Total  int
		Groups []struct {
			Key   map[string]string
			Count int
		}
		Wasted []struct {
			Writer        string
			AlreadyExists int
			NoOps         *int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "TopReport" || doc.Total != 62 || len(doc.Groups) != 3 ||
		doc.Groups[0].Key["user"] != "looper" || doc.Groups[0].Key["verb"] != "get" || doc.Groups[0].Count != 40 ||
		doc.Groups[1].Key["user"] != "creator" || doc.Groups[1].Count != 20 {
		t.Errorf("report %+v: want looper's 40 gets, creator's 20 creates, updater's 2 updates", doc)
	}
	w := doc.Wasted
	if len(w) != 2 || w[0].Writer != "creator/creator" || w[0].AlreadyExists != 20 || w[0].NoOps == nil || *w[0].NoOps != 0 ||
		w[1].Writer != "updater/updater" || w[1].NoOps != nil {
		t.Errorf("wasted %+v: want creator's 20 creates refused and no no-op, updater's no-ops unknown", w)
	}

	out, _, code = run(t, "conflicts", "--audit-log", log, "--view", "wasted")
	if code != 0 || !strings.Contains(out, "creator/creator") || !strings.Contains(out, "NO-OPS ? for 1 writer") {
		t.Errorf("exit %d, wasted view:\n%s", code, out)
	}

	out, errOut, code = run(t, "conflicts", "--audit-log", log, "--view", "top", "--fail-on", "hot-read", "--hot-rate", "1.5", "--hot-for", "8s")
	if code != 1 || !strings.Contains(errOut, "1 hot read loop found (--fail-on hot-read)") || !strings.Contains(out, "looper (looper/v1)") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 naming looper's loop", code, errOut, out)
	}
	_, errOut, code = run(t, "conflicts", "--audit-log", log, "--view", "top", "--fail-on", "hot-read", "--hot-rate", "2.5", "--hot-for", "8s")
	if code != 0 {
		t.Errorf("exit %d (%s): a loop at 2 a second is under --hot-rate 2.5", code, errOut)
	}
	out, _, code = run(t, "conflicts", "--audit-log", log, "--view", "top", "-o", "github", "--fail-on", "hot-read", "--hot-rate", "1.5", "--hot-for", "8s")
	if code != 1 || !strings.Contains(out, "::error title=hot read loop%3A configmaps/ns/a::looper (looper/v1) sent 40 requests") {
		t.Errorf("-o github: exit %d, want 1 and the loop as an error:\n%s", code, out)
	}
	page := filepath.Join(t.TempDir(), "top.html")
	if _, errOut, code = run(t, "conflicts", "--audit-log", log, "--view", "top", "--report", page); code != 0 {
		t.Errorf("--report: exit %d (%s)", code, errOut)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<td>looper</td><td>40</td>") {
		t.Errorf("--report page (%v):\n%s", err, b)
	}
	_, errOut, code = run(t, "conflicts", "--audit-log", log, "--view", "wasted", "--fail-on", "wasted-write", "--hot-rate", "0.9", "--hot-for", "8s", "-o", "json")
	if code != 1 || !strings.Contains(errOut, "wasted-write: creator (creator/v1), configmaps/ns/a: 20 requests") {
		t.Errorf("exit %d, stderr %q: want creator's wasted-write loop named", code, errOut)
	}
}

// TestConflictsViewTopUsage: the flags of --view top and wasted are
// refused where they mean nothing, and theirs checked.
func TestConflictsViewTopUsage(t *testing.T) {
	log := loopLog(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "user"}, "--by is for --view top or --view wasted"},
		{[]string{"--fail-on", "hot-read"}, "--fail-on is for --view top or --view wasted"},
		{[]string{"--view", "wasted", "--by", "user"}, "--by is for --view top"},
		{[]string{"--view", "top", "--by", "pod"}, `--by "pod": use one of user, writer, verb`},
		{[]string{"--view", "top", "--fail-on", "fight"}, `--fail-on "fight": use hot-read, wasted-write, any or none`},
		{[]string{"--view", "top", "--hot-for", "0s"}, "--hot-for must be positive"},
		{[]string{"--view", "top", "--scenario", "x.yaml"}, "--view top and --scenario cannot be used together"},
		{[]string{"--view", "top", "--report", "x.svg"}, "--view top draws no picture; give FILE.html"},
		{[]string{"--verb", "get"}, `--verb "get" is not a write verb`},
	} {
		_, errOut, code := run(t, append([]string{"conflicts", "--audit-log", log}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, errOut, code := run(t, "conflicts", "--audit-log", log, "--view", "top", "--verb", "get", "--by", "verb"); code != 0 {
		t.Errorf("--view top --verb get: exit %d (%s), want 0", code, errOut)
	}
}

// TestConflictsObjectWithNamespace: --object takes TYPE/NAMESPACE/NAME, as
// watch --replay does; a -n that names another namespace is refused.
func TestConflictsObjectWithNamespace(t *testing.T) {
	log := loopLog(t)
	out, errOut, code := run(t, "conflicts", "--audit-log", log, "--object", "cm/ns/a", "-o", "json")
	if code != 0 || !strings.Contains(out, `"attempts": 22`) {
		t.Errorf("--object cm/ns/a: exit %d (%s), want creator's and updater's 22 attempts:\n%s", code, errOut, out)
	}
	out2, _, _ := run(t, "conflicts", "--audit-log", log, "--object", "cm/a", "-n", "ns", "-o", "json")
	// The scope names --object as given; the rest is the same.
	_, a, _ := strings.Cut(out, `"summary"`)
	_, b, _ := strings.Cut(out2, `"summary"`)
	if a != b || a == "" {
		t.Errorf("--object cm/a -n ns differs from --object cm/ns/a:\n%s\n%s", out2, out)
	}
	_, errOut, code = run(t, "conflicts", "--audit-log", log, "--object", "cm/ns/a", "-n", "other")
	if code != 2 || !strings.Contains(errOut, `cm/ns/a names namespace "ns", -n names "other": give one`) {
		t.Errorf("-n other: exit %d, stderr %q", code, errOut)
	}
}

// TestConflictsLiveSubcommand: conflicts live takes only its own flags;
// the deprecated --live still runs the same count, with a warning.
func TestConflictsLiveSubcommand(t *testing.T) {
	_, errOut, code := run(t, "conflicts", "live", "--audit-log", "audit.log")
	if code != 2 || !strings.Contains(errOut, "unknown flag: --audit-log") {
		t.Errorf("conflicts live --audit-log: exit %d, stderr %q; want 2, unknown flag", code, errOut)
	}
	_, errOut, code = run(t, "conflicts", "live", "--for", "0s")
	if code != 2 || !strings.Contains(errOut, "--for must be positive") {
		t.Errorf("conflicts live --for 0s: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "conflicts", "live", "-o", "sarif")
	if code != 2 || !strings.Contains(errOut, `--output "sarif"`) {
		t.Errorf("conflicts live -o sarif: exit %d, stderr %q", code, errOut)
	}
	_, errOut, _ = run(t, "conflicts", "--live", "--for", "0s")
	if !strings.Contains(errOut, "Flag --live has been deprecated, use kubectl rv conflicts live") {
		t.Errorf("--live: stderr %q, want the deprecation", errOut)
	}
}
