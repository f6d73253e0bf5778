package churnprint

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// gapRevisions is the span of the sample gap, from 100 to 180.
var gapRevisions = uint64(80)

func report() *churn.Report {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	stamp := &churn.Explanation{Samples: 4, Fields: []churn.ChangedField{{Path: ".metadata.annotations.stamp", Samples: 4}}, TimestampOnly: true}
	return &churn.Report{
		Start: start, End: start.Add(time.Minute), Duration: time.Minute, TypesWatched: 3, ObjectsWatched: 104, Writes: 412,
		Objects: []churn.Object{
			{Resource: "configmaps", Namespace: "shop", Name: "hot", Counts: churn.Counts{Writes: 300, Metadata: 300}, PerMinute: 300,
				Managers: []churn.ManagerWrites{{Manager: "looper", Counts: churn.Counts{Writes: 300, Metadata: 300}, PerMinute: 300}}, Explain: stamp},
			{Resource: "deployments.apps", Namespace: "shop", Name: "web", Counts: churn.Counts{Writes: 52, Spec: 52}, PerMinute: 52,
				Managers: []churn.ManagerWrites{{Manager: "hpa", Counts: churn.Counts{Writes: 26, Spec: 26}}, {Manager: "\x1b[31mevil", Counts: churn.Counts{Writes: 26, Spec: 26}}}},
		},
		Managers: []churn.ManagerWrites{{Manager: "looper", Objects: 1, Counts: churn.Counts{Writes: 300, Metadata: 300}, PerMinute: 300}},
		Types:    []churn.Type{{Resource: "configmaps", Objects: 101, Counts: churn.Counts{Writes: 300, Metadata: 300}, PerMinute: 300}},
		Loops:    []churn.Loop{{Resource: "configmaps", Namespace: "shop", Name: "hot", Manager: "looper", Writes: 300, PerMinute: 300, Class: follow.Metadata, Explain: stamp}},
		Fights: []churn.Fight{{Resource: "deployments.apps", Fight: follow.Fight{Object: "deployments.apps/web", Namespace: "shop", Field: ".spec.replicas",
			Managers: []string{"\x1b[31mevil", "hpa"}, Flips: 51, Capped: true, PerMinute: 51, Since: start}}},
		Gaps: []follow.Gap{{Resource: "configmaps", From: "100", To: "180", Revisions: &gapRevisions, Changes: 2, Error: "too old resource version: 100 (150)", Time: start}},
	}
}

// TestPrint shows every section, the explanation of a loop and escaped
// server strings; an empty report says that nothing was found.
func TestPrint(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  *churn.Report
	}{{"table.txt", report()}, {"empty.txt", &churn.Report{Duration: 30 * time.Second, TypesWatched: 40, ObjectsWatched: 12}}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &output.Printer{Out: &buf, Format: output.Table}
			if err := Print(p, tc.rep, Scope{LoopRate: 20}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tc.name, buf.Bytes())
		})
	}
}

// TestDocument is the versioned ChurnReport.
func TestDocument(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Out: &buf, Format: output.JSON}
	if err := p.PrintObject(NewDocument(report(), Scope{Namespace: "shop", LoopRate: 20})); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "report.json", buf.Bytes())
}
