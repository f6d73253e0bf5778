package conflictsprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func report() *conflicts.Report {
	a := audit.Writer{User: "system:serviceaccount:kube-system:ctrl", FieldManager: "ctrl", Pod: "ctrl-7d9f"}
	b := audit.Writer{User: "rv-admin", FieldManager: "evil\x1b[31m"}
	return &conflicts.Report{
		Summary: conflicts.Summary{Tally: conflicts.Tally{Attempts: 5, Conflicts: 2, Successes: 3, RetryChains: 1, GiveUps: 1}, Writers: 2, Objects: 1, DryRuns: 3},
		Input:   audit.Stats{Lines: 12, Events: 12, Duplicates: 4},
		Objects: []conflicts.ObjectStats{{Object: conflicts.ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "c"},
			Tally: conflicts.Tally{Attempts: 5, Conflicts: 2, Successes: 3}, Writers: 2, WorstWriter: a.String(), WorstConflicts: 2}},
		Writers: []conflicts.WriterStats{
			{Writer: a, UserAgent: "manager/v0.0.0", Tally: conflicts.Tally{Attempts: 3, Conflicts: 2, Successes: 1, RetryChains: 1, GiveUps: 1},
				ConflictRate: 2.0 / 3, LostTo: []conflicts.Count{{Name: b.String(), Count: 2}}},
			{Writer: b, Tally: conflicts.Tally{Attempts: 2, Successes: 2},
				Shared:     &conflicts.Shared{UserAgents: []string{"a/v1", "a/v2"}, Overlapping: 1},
				FieldsLost: []conflicts.FieldOwner{{Manager: "m1", Fields: []string{".data.a"}}}},
		},
		Causes: []conflicts.CauseStats{{Cause: conflicts.Contention, Count: 2, Writers: 1, Fix: conflicts.Fix(conflicts.Contention)}},
		Timeline: []conflicts.Attempt{
			{Received: t0, Writer: b.String(), Verb: "update", Code: 200, Chain: 1, Step: 1, Precondition: "10", Result: "11"},
			{Received: t0.Add(5 * time.Millisecond), Writer: a.String(), Verb: "update", Code: 409, Chain: 1, Step: 1, Precondition: "10", LostTo: []string{b.String()}, Cause: conflicts.Contention},
			{Received: t0.Add(20 * time.Millisecond), Writer: a.String(), Verb: "update", Subresource: "status", Code: 409, Chain: 1, Step: 2, Reread: true, GiveUp: true, Cause: conflicts.Contention},
		},
	}
}

func TestPrint(t *testing.T) {
	for _, view := range Views {
		t.Run(view, func(t *testing.T) {
			var buf bytes.Buffer
			p := &output.Printer{Out: &buf, Format: output.Table}
			if err := Print(p, report(), view, DefaultTop); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, view+".txt", buf.Bytes())
		})
	}
}

func TestDocument(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Out: &buf, Format: output.JSON}
	if err := p.PrintObject(NewDocument(report(), Scope{AuditLogs: []string{"audit.log"}, RetryWindow: "5s"}, 0)); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "report.json", buf.Bytes())
}

func TestSVG(t *testing.T) {
	rep := report()
	rep.TimelineObject = &rep.Objects[0].Object
	golden.Assert(t, "timeline.svg", SVG(rep))
	golden.Assert(t, "report.html", HTML(rep))
}

// TestSVGAxisTicksAreRound: the time axis is labelled at round steps from
// the first attempt (it read +0.00s, +1.98s, +3.96s over 9.9 s), with the
// last tick at the axis' end.
func TestSVGAxisTicksAreRound(t *testing.T) {
	obj := conflicts.ObjectKey{Resource: "configmaps", Namespace: "shop", Name: "stock"}
	rep := &conflicts.Report{TimelineObject: &obj, Timeline: []conflicts.Attempt{
		{Writer: "a", Received: t0, Code: 200},
		{Writer: "b", Received: t0.Add(9900 * time.Millisecond), Code: 409},
	}}
	var got []string
	for _, m := range regexp.MustCompile(`>\+([^<]*)</text>`).FindAllStringSubmatch(string(SVG(rep)), -1) {
		got = append(got, m[1])
	}
	if diff := cmp.Diff([]string{"0s", "2s", "4s", "6s", "8s", "10s"}, got); diff != "" {
		t.Errorf("tick labels (-want +got):\n%s", diff)
	}
}

func liveReport() *conflicts.LiveReport {
	return &conflicts.LiveReport{Start: t0, End: t0.Add(10 * time.Second), Seconds: 10, Conflicts: 27, PerSecond: 2.7, Requests: 1500, Resets: 1,
		Rows: []conflicts.LiveRow{
			{Resource: "configmaps", Verb: "PUT", Conflicts: 20, PerSecond: 2},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "PUT", Conflicts: 5, PerSecond: 0.5, Reset: true},
			{Group: "apps", Resource: "deployments", Subresource: "status", Verb: "PATCH", Conflicts: 2, PerSecond: 0.2},
		}}
}

func TestPrintLive(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Out: &buf, Format: output.Table}
	if err := PrintLive(p, liveReport(), "https://127.0.0.1:6443"); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "live.txt", buf.Bytes())
	buf.Reset()
	rep := liveReport()
	rep.Restarted = true
	if err := PrintLive(p, rep, "https://127.0.0.1:6443\x1b[31m"); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "live-restarted.txt", buf.Bytes())
}

func TestLiveDocument(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Out: &buf, Format: output.YAML}
	if err := p.PrintObject(NewLiveDocument(liveReport(), LiveScope{Server: "https://127.0.0.1:6443", For: "10s"})); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "live.yaml", buf.Bytes())
}

func TestPrintTick(t *testing.T) {
	var buf bytes.Buffer
	rep := liveReport()
	rep.Start, rep.End = t0.Add(2*time.Second), t0.Add(4*time.Second)
	rep.Rows = append([]conflicts.LiveRow{{Resource: "secrets\x1b[31m", Verb: "PUT", Conflicts: 1, PerSecond: 0.1}}, rep.Rows...)
	if err := PrintTick(&buf, rep, t0); err != nil {
		t.Fatal(err)
	}
	if err := PrintTick(&buf, &conflicts.LiveReport{End: t0.Add(6 * time.Second)}, t0); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "tick.txt", buf.Bytes())
}

// TestDocumentJSONIsMarshalIndent holds AppendIndentedJSON to
// json.MarshalIndent, on documents with and without the optional parts.
func TestDocumentJSONIsMarshalIndent(t *testing.T) {
	full := NewDocument(report(), Scope{AuditLogs: []string{"a.log", "b.log"}, Since: "1h", RetryWindow: "5s", Object: "cm/x"}, 0)
	odd := full
	odd.Objects = append([]conflicts.ObjectStats{
		{Object: conflicts.ObjectKey{Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system", Name: "<lease>&\u2028\"x\"\\"}},
		{Object: conflicts.ObjectKey{Resource: "namespaces", Name: "é\x01\xff"}, Tally: conflicts.Tally{Attempts: -1, RetryChains: 3, GiveUps: 4}, WorstConflicts: 7},
		{Object: conflicts.ObjectKey{Resource: "nodes"}, WorstWriter: "w"},
	}, full.Objects...)
	odd.Timeline = nil
	odd.Writers = append([]conflicts.WriterStats{
		{Writer: audit.Writer{User: "u\"<", Pod: "p"}, ConflictRate: 1e-7, LostTo: []conflicts.Count{{Name: "a&", Count: 1}, {Name: "", Count: 0}}},
		{Writer: audit.Writer{FieldManager: "m"}, UserAgent: "ua", ConflictRate: 1, Causes: []conflicts.CauseCount{{Cause: conflicts.Unknown, Count: 2}},
			ConflictSeconds: 0.0005, RetrySeconds: 1e-9},
		{Writer: audit.Writer{FieldManager: "r"}, RetrySeconds: 12.5},
		{ConflictRate: 0.1 + 0.2, LostTo: []conflicts.Count{}},
	}, full.Writers...)
	empty := NewDocument(&conflicts.Report{}, Scope{}, 0)
	noObjects := full
	noObjects.Objects = []conflicts.ObjectStats{}
	noObjects.Writers = []conflicts.WriterStats{}
	for name, d := range map[string]Document{"full": full, "odd": odd, "empty": empty, "no objects": noObjects} {
		t.Run(name, func(t *testing.T) {
			want, err := json.MarshalIndent(d, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.AppendIndentedJSON([]byte("x"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestPrintedJSONIsMarshalIndent prints a document long enough to be
// written in pieces (output.JSONOut) through the Printer: the bytes are
// json.MarshalIndent's, then a newline, as they are for a short one; a
// writer that fails fails the print.
func TestPrintedJSONIsMarshalIndent(t *testing.T) {
	rep := report()
	for i := range 3000 {
		rep.Objects = append(rep.Objects, conflicts.ObjectStats{Object: conflicts.ObjectKey{Resource: "configmaps", Namespace: "ns", Name: fmt.Sprintf("cm-%d", i)},
			Tally: conflicts.Tally{Attempts: i, Conflicts: i % 7}, Writers: 2, WorstWriter: "w\"<", WorstConflicts: i % 7})
	}
	long := NewDocument(rep, Scope{AuditLogs: []string{"a.log"}, RetryWindow: "5s"}, 0)
	short := NewDocument(report(), Scope{AuditLogs: []string{"a.log"}, RetryWindow: "5s"}, 0)
	for name, d := range map[string]Document{"long": long, "short": short} {
		want, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		w := &countingWriter{}
		if err := (&output.Printer{Out: w, Format: output.JSON}).PrintObject(d); err != nil {
			t.Fatal(err)
		}
		if got := w.buf.String(); got != string(want)+"\n" {
			t.Errorf("%s: printed %d bytes, want MarshalIndent's %d and a newline", name, len(got), len(want))
		}
		if pieces := w.writes > 1; pieces != (name == "long") {
			t.Errorf("%s: %d writes of %d bytes", name, w.writes, len(want))
		}
	}
	failing := &countingWriter{fail: errors.New("broken pipe")}
	if err := (&output.Printer{Out: failing, Format: output.JSON}).PrintObject(long); err == nil || failing.writes != 1 {
		t.Errorf("a failing writer: error %v after %d writes, want the write's error after the first", err, failing.writes)
	}
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
	fail   error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.fail != nil {
		return 0, w.fail
	}
	return w.buf.Write(p)
}

// TestWideNamesTheFieldsOfApplyConflicts: -o wide adds the fields an apply
// conflict named, with their owners, to the causes and timeline views
// (escaped as every cell is); the default table leaves them out.
func TestWideNamesTheFieldsOfApplyConflicts(t *testing.T) {
	rep := report()
	owners := []conflicts.FieldOwner{{Manager: "m1", Fields: []string{".data.a", ".data.c"}}, {Manager: "evil\x1b[31m", Fields: []string{".data.b"}}}
	rep.Causes = append(rep.Causes, conflicts.CauseStats{Cause: conflicts.ApplyConflict, Count: 1, Writers: 1, Fix: conflicts.Fix(conflicts.ApplyConflict), Fields: owners})
	rep.Timeline[1].Cause, rep.Timeline[1].FieldOwners = conflicts.ApplyConflict, owners
	const want = `.data.a, .data.c (m1); .data.b (evil^[[31m)`
	for _, view := range []string{ViewCauses, ViewTimeline} {
		for _, format := range []output.Format{output.Wide, output.Table} {
			var buf bytes.Buffer
			if err := Print(&output.Printer{Out: &buf, Format: format}, rep, view, 0); err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(buf.Bytes(), []byte(want)); got != (format == output.Wide) {
				t.Errorf("%s view, -o %s: names the fields %v, want %v:\n%s", view, format, got, format == output.Wide, buf.String())
			}
		}
	}
}

// crowded is report() with 24 more objects and writers, none with a 409,
// after the report's own (the report sorts them so), and 24 more
// attempts in the timeline.
func crowded() *conflicts.Report {
	rep := report()
	for i := range 24 {
		rep.Objects = append(rep.Objects, conflicts.ObjectStats{Object: conflicts.ObjectKey{Resource: "configmaps", Namespace: "ns", Name: fmt.Sprintf("quiet-%02d", i)},
			Tally: conflicts.Tally{Attempts: 1, Successes: 1}, Writers: 1})
		rep.Writers = append(rep.Writers, conflicts.WriterStats{Writer: audit.Writer{User: "u", FieldManager: fmt.Sprintf("quiet-%02d", i)},
			Tally: conflicts.Tally{Attempts: 1, Successes: 1}})
		rep.Timeline = append(rep.Timeline, conflicts.Attempt{Received: t0.Add(time.Second), Writer: "u/quiet", Verb: "update", Code: 200, Chain: 2, Step: 1})
	}
	return rep
}

// TestPrintTop: the objects and writers tables show top rows and then a
// line saying how many there are and how to see them all, before the
// summary; with every row shown there is no such line; the timeline and
// causes are never cut; the report itself keeps every row.
func TestPrintTop(t *testing.T) {
	rep := crowded()
	print := func(view string, top int) string {
		t.Helper()
		var buf bytes.Buffer
		if err := Print(&output.Printer{Out: &buf, Format: output.Table}, rep, view, top); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	golden.Assert(t, "objects-top.txt", []byte(print(ViewObjects, 3)))
	for _, tc := range []struct {
		view      string
		top, rows int
		footer    string
	}{
		{ViewObjects, DefaultTop, 20, "20 of 25 objects shown (the most 409s first); --top 0 shows all\n\n"},
		{ViewWriters, DefaultTop, 20, "20 of 26 writers shown (the most 409s first); --top 0 shows all\n\n"},
		{ViewObjects, 0, 25, ""},
		{ViewWriters, 26, 26, ""},
		{ViewTimeline, 2, 27, ""},
		{ViewCauses, 0, 1, ""},
	} {
		out := print(tc.view, tc.top)
		table, _, _ := strings.Cut(out, "\n\n")
		rows := strings.Count(table, "\n") // the header and the rows, less the last newline
		if tc.footer != "" {
			rows--
		}
		if rows != tc.rows {
			t.Errorf("%s --top %d: %d rows, want %d:\n%s", tc.view, tc.top, rows, tc.rows, out)
		}
		if got := strings.Contains(out, "shown"); got != (tc.footer != "") || tc.footer != "" && !strings.Contains(out, "\n"+tc.footer) {
			t.Errorf("%s --top %d: want the line %q before the summary:\n%s", tc.view, tc.top, tc.footer, out)
		}
	}
	if len(rep.Objects) != 25 || len(rep.Writers) != 26 {
		t.Errorf("printing cut the report: %d objects, %d writers", len(rep.Objects), len(rep.Writers))
	}
}

// TestDocumentTop: the document keeps every object and writer unless
// given a top; the summary counts them all either way.
func TestDocumentTop(t *testing.T) {
	rep := crowded()
	rep.Summary.Objects, rep.Summary.Writers = 25, 26
	for _, tc := range []struct{ top, objects, writers int }{{0, 25, 26}, {3, 3, 3}, {25, 25, 25}, {100, 25, 26}} {
		d := NewDocument(rep, Scope{}, tc.top)
		if len(d.Objects) != tc.objects || len(d.Writers) != tc.writers || d.Summary.Objects != 25 || d.Summary.Writers != 26 || len(d.Timeline) != 27 {
			t.Errorf("top %d: %d objects, %d writers, %d attempts, summary %d/%d; want %d, %d, 27, 25/26",
				tc.top, len(d.Objects), len(d.Writers), len(d.Timeline), d.Summary.Objects, d.Summary.Writers, tc.objects, tc.writers)
		}
	}
}
