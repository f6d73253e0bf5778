package lagprint

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func i64(n int64) *int64 { return &n }

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sampleReport() *lag.Report {
	return &lag.Report{
		Now: now,
		Types: []lag.TypeSummary{
			{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Counts: lag.Counts{Objects: 12, Current: 10, Lagging: 2, Findings: 2}, ReportsObservedGeneration: true},
			{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true, Counts: lag.Counts{Objects: 3, Current: 1, Lagging: 1, NeverObserved: 1, Findings: 1}, ReportsObservedGeneration: true},
			{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true, Error: "secrets is forbidden"},
			{Group: "example.com", Version: "v1", Resource: "empty", Kind: "Empty", Namespaced: true},
		},
		Items: []lag.Item{
			{
				APIVersion: "apps/v1", Kind: "Deployment", Resource: "deployments.apps", Namespace: "shop", Name: "api",
				Generation: i64(7), ObservedGeneration: i64(6), Lag: 1, State: lag.Lagging, Finding: true,
				SpecChangedAt: now.Add(-95 * time.Second), SpecSource: "managedFields", SpecManager: "kubectl", AgeSeconds: 95,
				Observer:     "kube-controller-manager",
				Explanations: []string{"kube-controller-manager has observed generation 6 of 7", "kubectl rollout status will wait until status.observedGeneration reaches 7"},
			},
			{
				APIVersion: "apps/v1", Kind: "Deployment", Resource: "deployments.apps", Namespace: "shop", Name: "web",
				Generation: i64(3), ObservedGeneration: i64(2), Lag: 1, State: lag.Lagging, Finding: true,
				SpecChangedAt: now.Add(-3 * time.Hour), SpecSource: "managedFields-estimate", SpecManager: "kubectl", AgeSeconds: 10800,
				Observer:     "kube-controller-manager",
				Explanations: []string{"kube-controller-manager has observed generation 2 of 3", "kubectl rollout status will wait until status.observedGeneration reaches 3"},
			},
			{
				APIVersion: "example.com/v1", Kind: "Widget", Resource: "widgets.example.com", Namespace: "shop", Name: "blue\x1b[31m",
				Generation: i64(4), ObservedGeneration: i64(4), Lag: 2, State: lag.Lagging, Finding: true,
				LaggingConditions: []lag.Condition{{Type: "Ready", Status: "True", ObservedGeneration: 2}, {Type: "Synced", Status: "False", ObservedGeneration: 3}},
				SpecChangedAt:     now.Add(-20 * time.Second), SpecSource: "managedFields", AgeSeconds: 20, Observer: "widget-operator",
				Explanations: []string{"kubectl wait --for=condition=Ready will block until the condition's observedGeneration reaches 4"},
			},
			{
				APIVersion: "example.com/v1", Kind: "Widget", Resource: "widgets.example.com", Namespace: "shop", Name: "green",
				Generation: i64(1), State: lag.NeverObserved,
				SpecChangedAt: now.Add(-40 * 24 * time.Hour), SpecSource: "creationTimestamp", AgeSeconds: 3456000,
				Explanations: []string{"kstatus-based tools (Flux, kpt) will report this object as Current because it has no observedGeneration"},
			},
		},
		Warnings: []string{"secrets: secrets is forbidden; the results are partial"},
	}
}

// rolloutReport is a --for rollout report: a paused, a stalled and a
// rolling-out object.
func rolloutReport() *lag.Report {
	item := func(kind, resource, name string, st lag.State, rollout, note string) lag.Item {
		return lag.Item{
			APIVersion: "apps/v1", Kind: kind, Resource: resource, Namespace: "shop", Name: name,
			Generation: i64(2), ObservedGeneration: i64(2), State: st, Finding: true, Rollout: rollout,
			SpecChangedAt: now.Add(-30 * time.Second), SpecSource: "managedFields", SpecManager: "kubectl", AgeSeconds: 30,
			Observer: "kube-controller-manager", Explanations: []string{note},
		}
	}
	return &lag.Report{
		Now: now,
		Types: []lag.TypeSummary{
			{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Counts: lag.Counts{Objects: 3, Current: 1, Paused: 1, Stalled: 1, Findings: 2}, ReportsObservedGeneration: true},
			{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true, Counts: lag.Counts{Objects: 1, RollingOut: 1, Findings: 1}, ReportsObservedGeneration: true},
		},
		Items: []lag.Item{
			item("Deployment", "deployments.apps", "api", lag.Paused, `spec.paused is true: Waiting for deployment "api" rollout to finish: 0 out of 1 new replicas have been updated...`,
				`paused: spec.paused is true: Waiting for deployment "api" rollout to finish: 0 out of 1 new replicas have been updated...; kubectl rollout status and lag --wait wait until it is resumed (kubectl rollout resume)`),
			item("Deployment", "deployments.apps", "web", lag.Stalled, `condition Progressing is False (ProgressDeadlineExceeded): ReplicaSet "web-1" has timed out progressing.`,
				`stalled: condition Progressing is False (ProgressDeadlineExceeded): ReplicaSet "web-1" has timed out progressing.`),
			item("StatefulSet", "statefulsets.apps", "db", lag.RollingOut, "Waiting for 1 pods to be ready...", "not rolled out: Waiting for 1 pods to be ready..."),
		},
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name    string
		format  output.Format
		opts    Options
		rollout bool
	}{
		{"table.txt", output.Table, Options{}, false},
		{"table-all-namespaces.txt", output.Table, Options{ShowNamespace: true}, false},
		{"wide.txt", output.Wide, Options{ShowNamespace: true}, false},
		{"notes-capped.txt", output.Table, Options{MaxNotes: 2}, false},
		{"report.json", output.JSON, Options{}, false},
		{"report.yaml", output.YAML, Options{}, false},
		{"table-rollout.txt", output.Table, Options{}, true},
		{"report-rollout.json", output.JSON, Options{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &output.Printer{Format: tt.format, Out: &buf}
			rep, scope := sampleReport(), Scope{Namespace: "shop", Types: []string{"deployments.apps", "widgets.example.com"}, MinAge: "0s", For: "generation"}
			if tt.rollout {
				rep, scope = rolloutReport(), Scope{Namespace: "shop", Types: []string{"deployments.apps", "statefulsets.apps"}, MinAge: "0s", For: "rollout"}
			}
			var err error
			if p.Structured() {
				err = p.PrintObject(NewDocument(rep, scope))
			} else {
				err = PrintTable(p, rep, tt.opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tt.name, buf.Bytes())
		})
	}
}

func TestEmptyReportPrintsOnlyTheSummary(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Format: output.Table, Out: &buf}
	rep := &lag.Report{Now: now, Types: []lag.TypeSummary{{Group: "apps", Resource: "deployments", Counts: lag.Counts{Objects: 2, Current: 2}}}}
	if err := PrintTable(p, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "deployments.apps: 2 objects, 2 current, 0 lagging (0 findings over the thresholds)\ntotal: 1 type, 2 objects, 2 current, 0 lagging (0 findings over the thresholds)\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestNoHeadersLeavesOnlyRowsOnOut: with --no-headers the command sends
// the summary and the notes to Options.Notes (standard error), so that
// standard output holds one line per object and nothing else.
func TestNoHeadersLeavesOnlyRowsOnOut(t *testing.T) {
	var out, notes bytes.Buffer
	p := &output.Printer{Format: output.Table, NoHeaders: true, Out: &out}
	rep := sampleReport()
	if err := PrintTable(p, rep, Options{Notes: &notes}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(rep.Items) {
		t.Fatalf("standard output: want %d rows and nothing else, got %d lines:\n%s", len(rep.Items), len(lines), out.String())
	}
	for i, l := range lines {
		if kind, _, _ := strings.Cut(ObjectName(rep.Items[i]), "/"); !strings.HasPrefix(l, kind+"/") {
			t.Errorf("line %d is not a row: %q", i+1, l)
		}
	}
	for _, want := range []string{"total: 4 types", "\nnotes:\n", "kubectl rollout status will wait"} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("the notes writer lacks %q:\n%s", want, notes.String())
		}
	}
}

func TestDocumentHasEmptyItemsNotNull(t *testing.T) {
	d := NewDocument(&lag.Report{Now: now}, Scope{})
	if d.Items == nil || d.Kind != Kind || d.APIVersion != output.APIVersion {
		t.Errorf("unexpected document head: %+v", d)
	}
}
