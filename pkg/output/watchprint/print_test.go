package watchprint

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/diff"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

var t0 = time.Date(2026, 11, 21, 15, 4, 5, 0, time.UTC)

func u64(n uint64) *uint64 { return &n }
func i64(n int64) *int64   { return &n }

func sampleEvents() []inspect.Event {
	fields := diff.Objects(
		map[string]any{"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.25"}}}}}},
		map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "web"}}, "spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.26"}}}}}},
	)
	base := func(typ inspect.EventType, sec int, rv string) inspect.Event {
		return inspect.Event{Type: typ, Time: t0.Add(time.Duration(sec) * time.Second), Resource: "apps/v1/deployments", Object: "deployment.apps/web", Namespace: "shop", Name: "web", ResourceVersion: rv, Generation: i64(4)}
	}
	initial := base(inspect.EventAdded, 0, "812")
	initial.Writer, initial.Initial = &inspect.Writer{Reason: inspect.ReasonFirstSight}, true
	mod := base(inspect.EventModified, 1, "830")
	mod.Revisions, mod.GenerationBumped, mod.Fields, mod.Churn = u64(18), true, fields, follow.Spec
	mod.Writer = &inspect.Writer{Manager: "kubectl-client-side-apply", Operation: "Update"}
	status := base(inspect.EventModified, 2, "831")
	status.Revisions, status.Churn, status.Hot, status.WriteRate = u64(1), follow.Status, true, 1.5
	status.Fields = diff.Objects(map[string]any{"status": map[string]any{"readyReplicas": int64(3)}}, map[string]any{"status": map[string]any{"readyReplicas": int64(5)}})
	status.Writer = &inspect.Writer{Manager: "kube-controller-manager", Operation: "Update", Subresource: "status"}
	unknown := base(inspect.EventModified, 3, "840")
	unknown.Revisions, unknown.Churn = u64(9), follow.Metadata
	unknown.Fields = diff.Objects(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": "1"}}}, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"a": "2"}}})
	unknown.Writer = &inspect.Writer{Reason: inspect.ReasonSeveral, Candidates: []string{"argo", "evil\x1b]0;pwned\x07"}}
	gap := inspect.Event{Type: inspect.EventGap, Time: t0.Add(9 * time.Second), Resource: "apps/v1/deployments", Object: "deployments.apps", ResourceVersion: "990", PreviousResourceVersion: "840", Revisions: u64(150),
		Gap: &follow.Gap{Resource: "apps/v1/deployments", From: "840", To: "990", Revisions: u64(150), Changes: 1, Error: "too old resource version: 840 (870)", Time: t0.Add(9 * time.Second)}}
	gone := base(inspect.EventDeleted, 9, "")
	gone.AfterGap, gone.PreviousResourceVersion = true, "840"
	gone.Writer = &inspect.Writer{Reason: inspect.ReasonDeleted}
	fight := base(inspect.EventFight, 12, "1001")
	fight.Generation = nil
	fight.Fight = &follow.Fight{Object: "deployment.apps/web", Namespace: "shop", Field: ".spec.replicas", Managers: []string{"argo", "hpa"}, Flips: 4, Span: follow.Duration(6*time.Second + 400*time.Millisecond), PerMinute: 40, Since: t0.Add(6 * time.Second)}
	bookmark := inspect.Event{Type: inspect.EventBookmark, Time: t0.Add(13 * time.Second), Resource: "apps/v1/deployments", Object: "deployments.apps", ResourceVersion: "1005"}
	return []inspect.Event{initial, mod, status, unknown, gap, gone, fight, bookmark}
}

func sampleSummary() inspect.Summary {
	return inspect.Summary{
		Started: t0, Ended: t0.Add(15 * time.Second), Duration: follow.Duration(15*time.Second + 652501147), Writes: 3, Deletes: 1,
		Objects:   []inspect.ObjectSummary{{Object: "deployment.apps/web", Namespace: "shop", Resource: "apps/v1/deployments", Writes: 3, Spec: 1, Status: 1, Metadata: 1, Managers: []string{"kube-controller-manager (status)", "kubectl-client-side-apply"}, Deleted: true, Hot: true, PeakRate: 1.5}},
		Managers:  []inspect.ManagerSummary{{Manager: "kube-controller-manager (status)", Writes: 1, Fields: 1, Objects: 1}, {Manager: "kubectl-client-side-apply", Writes: 1, Fields: 3, Objects: 1}},
		HotFields: []inspect.FieldSummary{{Object: "deployment.apps/web", Namespace: "shop", Field: ".spec.replicas", Writes: 1, Managers: []string{"kubectl-client-side-apply"}}},
		Gaps:      []follow.Gap{*sampleEvents()[4].Gap},
		Fights:    []follow.Fight{*sampleEvents()[6].Fight},
	}
}

func TestPrinter(t *testing.T) {
	tests := []struct {
		name   string
		format output.Format
		opts   Options
		color  bool
		noHdr  bool
		golden string
	}{
		{name: "table", format: output.Table, golden: "table.txt"},
		{name: "wide", format: output.Wide, golden: "wide.txt"},
		{name: "diff", format: output.Table, opts: Options{Diff: true}, golden: "diff.txt"},
		{name: "all namespaces, no headers", format: output.Table, opts: Options{ShowNamespace: true}, noHdr: true, golden: "namespaces.txt"},
		{name: "color", format: output.Table, opts: Options{Diff: true}, color: true, golden: "color.txt"},
		{name: "json lines", format: output.JSON, golden: "events.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := New(&output.Printer{Format: tt.format, Color: tt.color, NoHeaders: tt.noHdr, Out: &buf}, tt.opts)
			for _, e := range sampleEvents() {
				if err := w.Event(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Summary(sampleSummary()); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tt.golden, buf.Bytes())
			if bytes.Contains(buf.Bytes(), []byte("\x1b]0;pwned")) {
				t.Errorf("a server string reached the terminal unescaped")
			}
		})
	}
}

// TestPrinterKeepsNumbersWhole: RV, REVS and GEN are read whole, so a
// value longer than its column widens the column in the table too, where
// OBJECT and MANAGER are cut.
func TestPrinterKeepsNumbersWhole(t *testing.T) {
	e := sampleEvents()[1]
	e.ResourceVersion, e.Revisions, e.Generation = "123456789012", u64(1320456), i64(98765)
	var buf bytes.Buffer
	w := New(&output.Printer{Format: output.Table, Out: &buf}, Options{})
	if err := w.Event(e); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"123456789012", "+1320456", "98765*"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("want %q whole in the row:\n%s", want, buf.String())
		}
	}
}
