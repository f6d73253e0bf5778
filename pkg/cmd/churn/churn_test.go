package churn

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

func TestChurnValidate(t *testing.T) {
	tests := []struct {
		name string
		set  func(o *ChurnOptions)
		args []string
		msg  string
	}{
		{"ok", func(o *ChurnOptions) {}, []string{"deployments,configmaps"}, ""},
		{"an object", func(o *ChurnOptions) {}, []string{"deploy/web"}, "resource types, not objects"},
		{"empty type", func(o *ChurnOptions) {}, []string{"deploy,"}, "empty resource type"},
		{"negative for", func(o *ChurnOptions) { o.For = -1 }, nil, "--for must be"},
		{"zero loop rate", func(o *ChurnOptions) { o.LoopRate = 0 }, nil, "--loop-rate must be positive"},
		{"zero fight threshold", func(o *ChurnOptions) { o.FightThreshold = 0 }, nil, "--fight-threshold"},
		{"zero top", func(o *ChurnOptions) { o.Top = 0 }, nil, "--top must be"},
		{"negative explain", func(o *ChurnOptions) { o.Explain = -1 }, nil, "--explain must be"},
		{"bad fail-on", func(o *ChurnOptions) { o.FailOn = "always" }, nil, `--fail-on "always": use loop, fight, any or none`},
		{"bad output", func(o *ChurnOptions) { o.Output.Output = "csv" }, nil, "--output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newChurnOptionsForTest()
			o.args = tt.args
			tt.set(o)
			err := o.Validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.msg)
			}
			if got := exitcode.Classify(err); got != exitcode.CodeUsage {
				t.Errorf("exit code %d, want %d", got, exitcode.CodeUsage)
			}
		})
	}
}

func TestChurnExit(t *testing.T) {
	loop := &churn.Report{Loops: []churn.Loop{{Name: "x"}}}
	for _, tc := range []struct {
		failOn string
		rep    *churn.Report
		want   int
	}{{"", loop, 0}, {"loop", loop, 1}, {"fight", loop, 0}, {"any", loop, 1}, {"any", &churn.Report{}, 0}} {
		o := newChurnOptionsForTest()
		o.FailOn = tc.failOn
		o.failOn, _ = churn.Findings.Parse("--fail-on", o.FailOn)
		if got := exitcode.Classify(o.exit(tc.rep)); got != tc.want {
			t.Errorf("--fail-on %q: exit %d, want %d", tc.failOn, got, tc.want)
		}
	}
}

// TestChurnExitMessage pins the finding's wording for counts of one ("1
// self-loops" was printed).
func TestChurnExitMessage(t *testing.T) {
	o := newChurnOptionsForTest()
	o.FailOn = "any"
	o.failOn, _ = churn.Findings.Parse("--fail-on", o.FailOn)
	err := o.exit(&churn.Report{Loops: []churn.Loop{{Name: "x"}}})
	if err == nil {
		t.Fatal("no finding")
	}
	if got, want := err.Error(), "1 self-loop and 0 fights found (--fail-on any)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func newChurnOptionsForTest() *ChurnOptions {
	def := churn.NewConfig()
	return &ChurnOptions{
		Output: cmdutil.NewOutputFlags(), LoopRate: def.LoopRate, FightThreshold: def.FightThreshold, Top: def.Top,
		IOStreams: genericiooptions.NewTestIOStreamsDiscard(),
	}
}
