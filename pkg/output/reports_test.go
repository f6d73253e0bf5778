package output_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/conflictsprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/leasesprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/simprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// reportKind renders one kind of report picture and page from three
// strings standing for what a scenario, an audit log or a server says.
type reportKind struct {
	name   string
	render func(s [3]string) (svg, page []byte)
}

var reportKinds = []reportKind{
	{"simulate", func(s [3]string) ([]byte, []byte) { r := simResult(s); return simprint.SVG(r), simprint.HTML(r) }},
	{"conflicts", func(s [3]string) ([]byte, []byte) {
		r := conflictsReport(s)
		return conflictsprint.SVG(r), conflictsprint.HTML(r)
	}},
	{"leases", func(s [3]string) ([]byte, []byte) {
		r := leasesReport(s)
		return leasesprint.SVG(r), leasesprint.HTML(r)
	}},
}

func ms(n int) scenario.Duration { return scenario.Duration(time.Duration(n) * time.Millisecond) }

// simResult puts the strings everywhere simulate's report shows text:
// the scenario, the actors, their requests, the invariants, leadership.
func simResult(s [3]string) *simulate.Result {
	a, b, c := s[0], s[1], s[2]
	actor := func(name string) simulate.ActorReport {
		return simulate.ActorReport{Name: name, Method: b, Retry: c, Operations: 2, Successes: 1, LostUpdates: 1,
			Latency:          simulate.Latency{Count: 1, P50: ms(3), P95: ms(3), P99: ms(3)},
			LatencyHistogram: []simulate.LatencyBucket{{Le: ms(2)}, {Le: ms(5), Count: 1}, {Count: 1}}}
	}
	return &simulate.Result{Scenario: a, Description: c, Seed: 1, Requests: 4, End: ms(100),
		Actors: []simulate.ActorReport{actor(a), actor(b)},
		Steps: []simulate.Step{
			{At: ms(10), Actor: a, Verb: "update", Code: 200, Reason: c, Note: b, Outcome: "ok"},
			{At: ms(20), Actor: b, Verb: "update", Code: 409, Reason: a, Note: c, Outcome: "conflict"},
			{At: ms(30), Actor: b, Verb: "update", Code: 409, Reason: b, Outcome: "giveup"},
		},
		Invariants: []simulate.InvariantResult{{Name: a, Expected: b, Actual: c, Reason: c, Lost: 1}},
		Leadership: &simulate.Leadership{
			Terms:     []simulate.Term{{Holder: a, From: ms(0), To: ms(50), Ended: c}},
			Failovers: []simulate.Failover{{Crashed: a, CrashedAt: ms(50), NewLeader: b, AcquiredAt: ms(60), Gap: ms(10)}},
		},
	}
}

// conflictsReport puts them where conflicts' report shows text: the
// object, the writers of the timeline, the causes and their fixes.
func conflictsReport(s [3]string) *conflicts.Report {
	a, b, c := s[0], s[1], s[2]
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	return &conflicts.Report{
		TimelineObject: &conflicts.ObjectKey{Resource: "configmaps", Namespace: a, Name: b},
		Timeline: []conflicts.Attempt{
			{Received: t0, Writer: a, Verb: "update", Code: 200, Chain: 1, Step: 1},
			{Received: t0.Add(5 * time.Millisecond), Writer: b, Verb: c, Code: 409, Chain: 1, Step: 1, Cause: conflicts.Cause(c)},
			{Received: t0.Add(9 * time.Millisecond), Writer: c, Verb: "update", Code: 409, Chain: 1, Step: 2, GiveUp: true},
			{Received: t0.Add(20 * time.Millisecond), Writer: a, Verb: "patch", Code: 500},
		},
		Causes: []conflicts.CauseStats{{Cause: conflicts.Cause(a), Count: 1, Writers: 1, Fix: c}},
	}
}

// leasesReport puts them where leases' report shows text: the locks,
// their holders, the takeovers, expiries and acting windows.
func leasesReport(s [3]string) *leases.Report {
	a, b, c := s[0], s[1], s[2]
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	to := at(20)
	lock := leases.LockRef{Kind: leases.KindLease, Namespace: a, Name: b}
	return &leases.Report{Mode: leases.ModeHistory, Start: t0, End: at(60),
		Locks: []leases.Lock{{LockRef: lock, Holder: c, Spans: []leases.Span{
			{Holder: a, From: at(0), LastRenew: at(10), To: &to, Renewals: 3},
			{Holder: c, From: at(30), LastRenew: at(50), Renewals: 5},
		}}},
		Takeovers: []leases.Takeover{{Lock: lock, Time: at(30), From: a, To: c}},
		Expiries:  []leases.Expiry{{Lock: lock, Holder: a, LastRenew: at(10), At: at(25)}},
		Acting:    []leases.Acting{{Lock: lock, Writer: a, LastRenew: at(10), LostAt: at(30), Reason: b, First: at(35), Last: at(40), Writes: 2, Objects: []string{c}}},
	}
}

// benign stands plain words for the strings, keeping which of them are
// equal and which are empty: the report drawn from them has the elements
// the fuzzed one must have.
func benign(s [3]string) [3]string {
	var out [3]string
	for i, v := range s {
		if v == "" {
			continue
		}
		out[i] = fmt.Sprintf("word%d", slices.Index(s[:], v))
	}
	return out
}

// TestReportsReadAsXML: a forged name (an edited audit log, a scenario)
// leaves every picture well-formed, and what XML forbids does not reach
// the page; what it allows is kept.
func TestReportsReadAsXML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		dropped string
	}{
		{"U+FFFF", "writer\uffff", "writer", "\uffff"},
		{"U+FFFE", "\ufffewriter", "writer", "\ufffe"},
		{"a byte that is not UTF-8", "caf\xe9", "caf", "\xe9"},
		{"an encoded surrogate", "w\xed\xa0\x80", "w", "\xed\xa0\x80"},
		{"ESC and BEL", "evil\x1b[31m\x07", "evil[31m", "\x1b"},
		{"C1 CSI and a bidi override, which XML allows", "a\u009b\u202eb", "a\u009b\u202eb", ""},
	}
	for _, tt := range tests {
		for _, k := range reportKinds {
			t.Run(tt.name+"/"+k.name, func(t *testing.T) {
				svg, page := k.render([3]string{tt.in, "other", tt.in})
				xmlShape(t, k.name, svg)
				assertXMLChars(t, k.name, page)
				for what, b := range map[string][]byte{"picture": svg, "page": page} {
					if !bytes.Contains(b, []byte(tt.want)) {
						t.Errorf("the %s does not show %q", what, tt.want)
					}
					if tt.dropped != "" && bytes.Contains(b, []byte(tt.dropped)) {
						t.Errorf("the %s keeps %q", what, tt.dropped)
					}
				}
			})
		}
	}
}

// FuzzReports draws every kind of report picture and page with strings
// from outside: the picture is XML that encoding/xml reads to the end,
// the page holds no code point XML forbids, and neither has an element,
// attribute or tag other than those of the same report drawn from plain
// words (the strings open nothing).
func FuzzReports(f *testing.F) {
	f.Add("writer", "kube-system", "contention")
	f.Add("evil\uffff", "\x1b[31m\u009b", "\u202e</title><script>")
	f.Add("\xed\xa0\x80", "a&b\"'", "\x00\r\n\t]]>")
	f.Add("x", "x", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		s := [3]string{a, b, c}
		for _, k := range reportKinds {
			svg, page := k.render(s)
			plainSVG, plainPage := k.render(benign(s))
			if got, want := xmlShape(t, k.name, svg), xmlShape(t, k.name, plainSVG); !slices.Equal(got, want) {
				t.Fatalf("%s picture of %q: its elements differ from the plain one's:\n%v\n%v", k.name, s, got, want)
			}
			assertXMLChars(t, k.name, page)
			if got, want := htmlShape(t, page), htmlShape(t, plainPage); !slices.Equal(got, want) {
				t.Fatalf("%s page of %q: its tags differ from the plain one's:\n%v\n%v", k.name, s, got, want)
			}
		}
	})
}

// xmlShape reads a picture with encoding/xml to the end and lists its
// elements and their attributes' names.
func xmlShape(t *testing.T, kind string, svg []byte) []string {
	t.Helper()
	var shape []string
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return shape
		}
		if err != nil {
			t.Fatalf("%s picture is not well-formed XML: %v\n%q", kind, err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			shape = append(shape, "<"+tok.Name.Local)
			for _, a := range tok.Attr {
				shape = append(shape, a.Name.Local)
			}
		case xml.EndElement:
			shape = append(shape, "/"+tok.Name.Local)
		case xml.Comment, xml.ProcInst, xml.Directive:
			shape = append(shape, fmt.Sprintf("%T", tok))
		}
	}
}

// assertXMLChars: the page holds only what XML allows (it carries the
// picture), so no U+FFFF, no control but tab, newline and CR, and nothing
// that is not UTF-8.
func assertXMLChars(t *testing.T, kind string, page []byte) {
	t.Helper()
	for i := 0; i < len(page); {
		r, size := utf8.DecodeRune(page[i:])
		bad := r == utf8.RuneError && size == 1 || r < 0x20 && !strings.ContainsRune("\t\n\r", r) || r == 0xfffe || r == 0xffff
		if bad {
			t.Fatalf("%s page holds %q at byte %d", kind, page[i:i+size], i)
		}
		i += size
	}
}

// htmlShape reads a page with golang.org/x/net/html's tokenizer and lists
// everything but text: tags with their attributes' names, comments,
// doctypes.
func htmlShape(t *testing.T, page []byte) []string {
	t.Helper()
	var shape []string
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("reading the page: %v", z.Err())
			}
			return shape
		}
		if tt == html.TextToken {
			continue
		}
		tok := z.Token()
		shape = append(shape, tt.String()+" "+tok.Data)
		for _, a := range tok.Attr {
			shape = append(shape, a.Key)
		}
	}
}
