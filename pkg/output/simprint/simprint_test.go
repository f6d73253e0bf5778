package simprint

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"

	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

func run(t *testing.T, name string, trace bool) *simulate.Result {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(context.Background(), sc, simulate.Config{Seed: 42, Trace: &trace, Rules: serverrules.Rules{}})
	if err != nil {
		t.Fatalf("running %s: %v", name, err)
	}
	return res
}

// TestBuiltinGolden pins the summary of every built-in scenario at seed 42,
// and the full request trace of the short ones.
func TestBuiltinGolden(t *testing.T) {
	for _, b := range scenario.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			res := run(t, b.Name, true)
			var buf bytes.Buffer
			p := &output.Printer{Format: output.Wide, Out: &buf}
			if len(res.Steps) <= 150 {
				if err := PrintSteps(p, res); err != nil {
					t.Fatal(err)
				}
				buf.WriteString("\n")
			}
			if err := PrintSummary(p, res); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, b.Name+".txt", buf.Bytes())
		})
	}
}

// TestSameSeedSameBytes runs every built-in twice and compares the whole
// JSON report, trace included.
func TestSameSeedSameBytes(t *testing.T) {
	for _, name := range []string{"two-clients", "lost-update", "ssa-fight", "watch-410", "leader-election"} {
		t.Run(name, func(t *testing.T) {
			a, _ := json.Marshal(NewReport(run(t, name, true)))
			c, _ := json.Marshal(NewReport(run(t, name, true)))
			if !bytes.Equal(a, c) {
				t.Fatalf("two runs with seed 42 differ")
			}
		})
	}
}

func TestStoryGolden(t *testing.T) {
	sc, err := scenario.LoadBuiltin("two-clients")
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(context.Background(), sc, simulate.Config{Rules: serverrules.Rules{}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := PrintStory(&output.Printer{Format: output.Table, Out: &buf}, res); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "story.txt", buf.Bytes())
	golden.Assert(t, "two-clients.svg", SVG(res))
}

// TestSVGIsWellFormed checks the pictures structurally: valid XML, one
// lane label per client, a mark per write, a histogram panel per actor with
// successful operations.
func TestSVGIsWellFormed(t *testing.T) {
	for _, name := range []string{"two-clients", "lost-update", "watch-410", "leader-election"} {
		t.Run(name, func(t *testing.T) {
			res := run(t, name, true)
			svg := SVG(res)
			counts := map[string]int{}
			dec := xml.NewDecoder(bytes.NewReader(svg))
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed XML: %v", err)
				}
				if se, ok := tok.(xml.StartElement); ok {
					counts[se.Name.Local]++
				}
			}
			if counts["svg"] != 1 {
				t.Errorf("want one svg root, got %d", counts["svg"])
			}
			writes := 0
			for _, s := range res.Steps {
				if s.Outcome == "ok" {
					writes++
				}
			}
			if counts["circle"] < writes {
				t.Errorf("want at least %d success marks, got %d circles", writes, counts["circle"])
			}
			h := HTML(res)
			if !bytes.HasPrefix(h, []byte("<!DOCTYPE html>")) || !bytes.Contains(h, []byte("<svg")) || bytes.Contains(h, []byte("http://")) && !bytes.Contains(h, []byte("http://www.w3.org/2000/svg")) {
				t.Errorf("the HTML report should be one self-contained page")
			}
		})
	}
}

func TestEscapesScenarioText(t *testing.T) {
	r := &simulate.Result{Scenario: "<script>x</script>", Description: "a & b"}
	if s := string(SVG(r)); strings.Contains(s, "<script>") {
		t.Errorf("the SVG carries unescaped text: %s", s)
	}
	if s := string(HTML(r)); strings.Contains(s, "<script>") {
		t.Errorf("the HTML carries unescaped text")
	}
}

// TestFailedWritesShow pins the summary of a run in which every write
// failed: the errors have their column and the invariant whose values
// still match is not reported as held.
func TestFailedWritesShow(t *testing.T) {
	res := &simulate.Result{
		Scenario: "counter", Seed: 7, Requests: 352, End: scenario.Duration(29970 * time.Millisecond), StartRevision: 2, FinalRevision: 2,
		Actors: []simulate.ActorReport{{
			Name: "careful", Replicas: 3, Method: "update", Retry: "DefaultBackoff", FieldManager: "worker", Target: "ConfigMap/default/counter",
			Operations: 176, Attempts: 176, Errors: 176, Retries: []simulate.Bucket{{Retries: 0, Count: 176}},
		}},
		Invariants: []simulate.InvariantResult{{Name: "counter ConfigMap/default/counter data.count", Expected: "0", Actual: "0", Reason: simulate.ReasonNothingWritten}},
		Objects:    []simulate.ObjectState{{Ref: "ConfigMap/default/counter", ResourceVersion: "2"}},
	}
	var buf bytes.Buffer
	if err := PrintSummary(&output.Printer{Format: output.Table, Out: &buf}, res); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "failed-writes.txt", buf.Bytes())
}

var (
	markRE   = regexp.MustCompile(`<(circle cx|path d="M|rect x)="?([0-9.]+)[" ]`)
	giveUpRE = regexp.MustCompile(`<rect x="([0-9.]+)" y="([0-9.]+)" width="12" height="12" fill="none"`)
	xMarkRE  = regexp.MustCompile(`<path d="M([0-9.]+) ([0-9.]+)L[^"]*" stroke="#d6452b"`)
	legendRE = regexp.MustCompile(`<text x="([0-9]+)" y="72">([^<]*)</text>`)
)

// TestSVGShowsWhatWentWrong: the lost-update picture names the failed
// invariants and the lost updates, not only the writes.
func TestSVGShowsWhatWentWrong(t *testing.T) {
	svg := string(SVG(run(t, "lost-update", true)))
	for _, want := range []string{">NOT HELD</tspan> counter ConfigMap/default/unconditional data.count: expected", "lost updates", "Lost updates by actor: unconditional "} {
		if !strings.Contains(svg, want) {
			t.Errorf("the picture does not show %q", want)
		}
	}
}

// TestSVGMarksStayVisible: in ssa-fight every apply 409 is followed by a
// give-up at the same time; the 409 must be drawn after (on top of) the
// give-up, the legend's labels must not run into the next mark, and no
// mark may hang over the plot's right edge.
func TestSVGMarksStayVisible(t *testing.T) {
	svg := string(SVG(run(t, "ssa-fight", true)))
	lanes := svg[strings.Index(svg, "text-anchor=\"end\""):]
	giveUps := giveUpRE.FindAllStringSubmatchIndex(lanes, -1)
	if len(giveUps) == 0 {
		t.Fatal("no give-up drawn")
	}
	covered := 0
	for _, g := range giveUps {
		gx, _ := strconv.ParseFloat(lanes[g[2]:g[3]], 64)
		gy, _ := strconv.ParseFloat(lanes[g[4]:g[5]], 64)
		for _, x := range xMarkRE.FindAllStringSubmatchIndex(lanes, -1) {
			cx, _ := strconv.ParseFloat(lanes[x[2]:x[3]], 64)
			cy, _ := strconv.ParseFloat(lanes[x[4]:x[5]], 64)
			if math.Abs(cx+4-(gx+6)) < 0.2 && math.Abs(cy+4-(gy+6)) < 0.2 {
				covered++
				if x[0] < g[0] {
					t.Errorf("the 409 at x=%.1f is drawn under its give-up", cx+4)
				}
			}
		}
	}
	if covered == 0 {
		t.Error("found no 409 at the time of a give-up: the test no longer looks at the case")
	}
	labels := legendRE.FindAllStringSubmatch(svg, -1)
	for i := 0; i+1 < len(labels); i++ {
		x, _ := strconv.Atoi(labels[i][1])
		next, _ := strconv.Atoi(labels[i+1][1])
		// A label takes up to 7.5px a character; the next mark reaches 6px
		// left of its center, which is 10px left of its label.
		if end := float64(x) + 7.5*float64(len([]rune(labels[i][2]))); end > float64(next-10-6-2) {
			t.Errorf("legend label %q ends at %.0f, into the next mark at %d", labels[i][2], end, next-10-6)
		}
	}
	for _, m := range markRE.FindAllStringSubmatch(lanes, -1) {
		if x, _ := strconv.ParseFloat(m[2], 64); x > output.SVGWidth-output.LaneRight-4 && m[1] != "rect x" {
			t.Errorf("a mark starting at x=%.1f hangs over the plot's right edge (%d)", x, output.SVGWidth-output.LaneRight)
		}
	}
}
