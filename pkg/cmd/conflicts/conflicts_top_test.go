package conflicts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
)

// floodLog is an audit log of 3 objects with 409s, each written 4 times
// by its own writer, and 30 without, each written 6 times by its own
// writer: the quiet objects have more attempts, so only the 409s can
// put the contended ones first.
func floodLog(t *testing.T) string {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	n := 0
	write := func(obj, manager string, code int) {
		at := t0.Add(time.Duration(n) * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"id-%d","stage":"ResponseComplete","verb":"update","requestURI":"/api/v1/namespaces/ns/configmaps/%s?fieldManager=%s","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"%s"},"responseStatus":{"code":%d},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}`+"\n",
			n, obj, manager, obj, code, at, at)
		n++
	}
	for i := range 3 {
		for j := range 4 {
			write(fmt.Sprintf("hot-%d", i), fmt.Sprintf("hot-%d", i), []int{200, 409, 200, 409}[j])
		}
	}
	for i := range 30 {
		for range 6 {
			write(fmt.Sprintf("quiet-%02d", i), fmt.Sprintf("quiet-%02d", i), 200)
		}
	}
	return cmdtest.FileWriter(t, t.TempDir())("audit.log", b.String())
}

// rowStart is how the first cell of a row of floodLog's tables starts.
var rowStart = regexp.MustCompile(`^(configmaps|u)/`)

// tableRows returns the first cells of the table's rows (before the blank
// line that ends it) and the lines after them up to the blank line.
func tableRows(out string) (rows, after []string) {
	table, _, _ := strings.Cut(out, "\n\n")
	for _, l := range strings.Split(table, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 && rowStart.MatchString(f[0]) {
			rows = append(rows, f[0])
			continue
		}
		after = append(after, l)
	}
	return rows, after
}

// TestConflictsTopDefault: the objects and writers tables stop at 20
// rows, those with 409s first, and say how many there are and how to see
// them all; --top 0 shows all; -o json keeps every row unless --top is
// given.
func TestConflictsTopDefault(t *testing.T) {
	log := floodLog(t)
	for _, tc := range []struct {
		view, noun, hot string
	}{{"objects", "objects", "configmaps/ns/hot-"}, {"writers", "writers", "u/hot-"}} {
		t.Run(tc.view, func(t *testing.T) {
			out, errOut, code := run(t, "conflicts", "--audit-log", log, "--view", tc.view)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			rows, after := tableRows(out)
			if len(rows) != 20 {
				t.Fatalf("%d rows, want 20:\n%s", len(rows), out)
			}
			for i, r := range rows[:3] {
				if !strings.HasPrefix(r, tc.hot) {
					t.Errorf("row %d is %s, want the 3 with 409s first:\n%s", i, r, out)
				}
			}
			want := fmt.Sprintf("20 of 33 %s shown (the most 409s first); --top 0 shows all", tc.noun)
			if len(after) != 1 || after[0] != want {
				t.Errorf("after the rows %q, want %q", after, want)
			}
			if !strings.Contains(out, "\n\n192 write attempts, 6 conflicts") || strings.Contains(errOut, "shown") {
				t.Errorf("the summary line is not after the footer on stdout:\n%s\nstderr %q", out, errOut)
			}
			out, _, _ = run(t, "conflicts", "--audit-log", log, "--view", tc.view, "--top", "0")
			if rows, after := tableRows(out); len(rows) != 33 || len(after) != 0 {
				t.Errorf("--top 0: %d rows and %q after them, want 33 and no footer:\n%s", len(rows), after, out)
			}
			out, _, _ = run(t, "conflicts", "--audit-log", log, "--view", tc.view, "--top", "5")
			if rows, after := tableRows(out); len(rows) != 5 || len(after) != 1 || !strings.HasPrefix(after[0], "5 of 33 "+tc.noun+" shown") {
				t.Errorf("--top 5: %d rows and %q after them, want 5 and the footer", len(rows), after)
			}
		})
	}
	var doc struct {
		Objects []json.RawMessage `json:"objects"`
		Writers []json.RawMessage `json:"writers"`
	}
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 33}, {[]string{"--top", "0"}, 33}, {[]string{"--top", "7"}, 7}} {
		out, errOut, code := run(t, append([]string{"conflicts", "--audit-log", log, "-o", "json"}, tc.args...)...)
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			t.Fatalf("-o json %v: exit %d, stderr %q", tc.args, code, errOut)
		}
		if len(doc.Objects) != tc.want || len(doc.Writers) != tc.want {
			t.Errorf("-o json %v: %d objects and %d writers, want %d each", tc.args, len(doc.Objects), len(doc.Writers), tc.want)
		}
	}
}

// TestConflictsTopKeepsFailOnRate: --top chooses the rows shown, not the
// writers --fail-on-rate judges: a writer past the top is still over the
// rate.
func TestConflictsTopKeepsFailOnRate(t *testing.T) {
	log := floodLog(t)
	// hot-0's rate is 50%; with --top 1 the quiet writers, at 0%, are
	// past the top, and so are hot-1 and hot-2.
	_, errOut, code := run(t, "conflicts", "--audit-log", log, "--top", "1", "--fail-on-rate", "0.4")
	if code != 1 || !strings.Contains(errOut, "3 writer(s) over --fail-on-rate 0.4") {
		t.Errorf("exit %d, stderr %q: want 1 naming the 3 writers over 40%%", code, errOut)
	}
}
