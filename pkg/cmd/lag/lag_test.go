package lag

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func TestLagValidate(t *testing.T) {
	valid := func() *LagOptions {
		return &LagOptions{Selection: cmdutil.NewSelectionFlags(false), Output: cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML, output.GitHub, output.JUnit, output.SARIF), Timeout: 5 * time.Minute, Concurrency: 4, For: forGeneration}
	}
	tests := []struct {
		name   string
		modify func(*LagOptions)
		want   string // "" = valid
	}{
		{"defaults", func(*LagOptions) {}, ""},
		{"types", func(o *LagOptions) { o.Selection.Args = []string{"deploy,sts", "widgets.example.com"} }, ""},
		{"wait with timeout", func(o *LagOptions) { o.Wait, o.timeoutSet = true, true }, ""},
		{"for rollout", func(o *LagOptions) { o.Wait, o.For = true, forRollout }, ""},
		{"for something else", func(o *LagOptions) { o.For = "ready" }, `--for "ready" is not supported: use one of generation, rollout`},
		{"empty type", func(o *LagOptions) { o.Selection.Args = []string{"deploy,"} }, "empty resource type"},
		{"type/name", func(o *LagOptions) { o.Selection.Args = []string{"deploy/web"} }, "not TYPE/NAME"},
		{"negative max-lag", func(o *LagOptions) { o.MaxLag = -1 }, "--max-lag must be 0 or positive, got -1"},
		{"negative min-age", func(o *LagOptions) { o.MinAge = -time.Second }, "--min-age must be 0 or positive"},
		{"negative timeout", func(o *LagOptions) { o.Wait, o.Timeout = true, -time.Second }, "--timeout must be 0 (no limit) or positive"},
		{"timeout alone", func(o *LagOptions) { o.timeoutSet = true }, "--timeout needs --wait or --watch"},
		{"wait and watch", func(o *LagOptions) { o.Wait, o.Watch = true, true }, "cannot be combined"},
		{"concurrency 0", func(o *LagOptions) { o.Concurrency = 0 }, "--concurrency must be at least 1"},
		{"negative chunk size", func(o *LagOptions) { o.Selection.ChunkSize = -5 }, "--chunk-size must be 0 or positive"},
		{"bad output", func(o *LagOptions) { o.Output.Output = "csv" }, `--output "csv" is not supported`},
		{"wait in a CI format", func(o *LagOptions) { o.Wait, o.Output.Output = true, "junit" }, ""},
		{"watch in a CI format", func(o *LagOptions) { o.Watch, o.Output.Output = true, "sarif" }, "-o sarif cannot be combined with --watch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.modify(o)
			err := o.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitcode.Classify(err) != exitcode.CodeUsage {
				t.Fatalf("want a usage error containing %q, got %v (exit %d)", tt.want, err, exitcode.Classify(err))
			}
		})
	}
}
