package loadprint

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/load"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func report() *load.Report {
	zero := 0
	return &load.Report{By: []load.Key{load.User, load.Namespace}, Total: 30, Window: load.Window{From: t0, To: t0.Add(time.Minute), Minutes: 1},
		Groups: []load.Group{
			{Key: map[load.Key]string{load.User: "evil\x1b[31m", load.Namespace: ""}, Count: 20, Share: 2.0 / 3, PerMinute: 20, P50Ms: 1.5, P99Ms: 30,
				Objects: []load.ObjectCount{{Object: "configmaps/a", Count: 20}}, Statuses: []load.StatusCount{{Code: 200, Count: 19}, {Code: 0, Count: 1}}},
			{Key: map[load.Key]string{load.User: "bob", load.Namespace: "ns"}, Count: 10, Share: 1.0 / 3, PerMinute: 10,
				Objects: []load.ObjectCount{{Object: "configmaps/ns/b", Count: 7, Error: 3}}, Statuses: []load.StatusCount{{Code: 404, Count: 10}}},
		},
		Wasted:   []load.Wasted{{Writer: "bob/kubectl", Attempts: 4, AlreadyExists: 1, NoOps: &zero, Wasted: 1, Share: 0.25}, {Writer: "m", Attempts: 1, NoOpUnknown: 1}},
		Findings: []load.Finding{{Kind: load.HotRead, Client: "evil\x1b[31m (ua)", Object: "configmaps/a", Count: 20, PerSecond: 2, From: t0, To: t0.Add(10 * time.Second)}},
	}
}

// TestPrintTop: a column per key, an empty namespace and status named, a
// summarised object count shown as its range, the loops after the table,
// and every string from the log escaped.
func TestPrintTop(t *testing.T) {
	var out bytes.Buffer
	if err := Print(&output.Printer{Format: output.Table, Out: &out}, report(), ViewTop, 1); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"USER", "NAMESPACE", "REQUESTS", "evil^[[31m", "(cluster)", "200:19 -:1", "configmaps/a (20)",
		"1 of 2 groups shown (the most requests first); --top 0 shows all", "HOT LOOP", "hot-read", "10s",
		"30 requests over 60s (30.0 a minute) from 0 events; 2 groups"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("table holds a raw escape:\n%q", got)
	}
	out.Reset()
	_ = Print(&output.Printer{Format: output.Table, Out: &out}, report(), ViewTop, 0)
	if !strings.Contains(out.String(), "configmaps/ns/b (4-7)") {
		t.Errorf("a summarised count is not shown as its range:\n%s", out.String())
	}
}

func TestPrintWasted(t *testing.T) {
	var out bytes.Buffer
	if err := Print(&output.Printer{Format: output.Table, Out: &out}, report(), ViewWasted, 0); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "bob/kubectl 4 1 0 0 1 25.0%" {
		t.Errorf("bob's row %q", lines[1])
	}
	if f := strings.Fields(lines[2]); len(f) < 4 || f[3] != "?" {
		t.Errorf("m's row %q: want NO-OPS ?", lines[2])
	}
	if !strings.Contains(out.String(), "NO-OPS ? for 1 writer: telling a no-op needs RequestResponse-level events") {
		t.Errorf("no note on unknown no-ops:\n%s", out.String())
	}
}

// TestDocumentListsAreNeverNull: a report with nothing found prints empty
// lists, for programs that range over them.
func TestDocumentListsAreNeverNull(t *testing.T) {
	b, err := json.Marshal(NewDocument(&load.Report{}, Scope{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"TopReport"`, `"groups":[]`, `"wasted":[]`, `"findings":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// TestHTMLEscapes: the page shows the tables, every string from the log
// escaped.
func TestHTMLEscapes(t *testing.T) {
	rep := report()
	rep.Groups[1].Key[load.User] = "<script>alert(1)</script>"
	page := string(HTML(rep))
	for _, want := range []string{"<h2>Requests by user, namespace</h2>", "&lt;script&gt;", "<td class=\"bad\">hot-read</td>", "<h2>Wasted writes</h2>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "\x1b") {
		t.Errorf("page holds markup or an escape from the log:\n%s", page)
	}
}

// TestCIFormats: a rule, a group and a case per kind of hot loop; a loop
// of a kind --fail-on names is an error, located at its object.
func TestCIFormats(t *testing.T) {
	rep := report()
	rep.Findings[0].Ref = audit.ObjectRef{Resource: "configmaps", Namespace: "shop", Name: "a"}
	rep.Findings = append(rep.Findings, load.Finding{Kind: load.WastedWrite, Client: "creator (kubectl/v1.36)", Object: "leases.coordination.k8s.io/shop/l",
		Ref: audit.ObjectRef{Resource: "leases", APIGroup: "coordination.k8s.io", Namespace: "shop", Name: "l"}, Count: 40, PerSecond: 1, From: t0, To: t0.Add(40 * time.Second)})
	ci := CI{Tool: cireport.Tool{Name: "kubectl-rv", Version: "v0.0.0-test"}, Fails: func(k string) bool { return k == load.HotRead }}
	cigolden.Assert(t, "top-ci", func(w io.Writer, f output.Format) error { return PrintCI(w, f, rep, ci) })
}
