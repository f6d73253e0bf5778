package hack

import (
	"os/exec"
	"strings"
	"testing"
)

// TestE2ESummaryCountsTopLevelAndSubtestsApart feeds hack/e2e-summary.sh the
// go test -v output of one failing subtest: it must read as one failed test
// and one failed subtest, not "2 failed", and exit non-zero.
func TestE2ESummaryCountsTopLevelAndSubtestsApart(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantSub  string
		wantTop  string
		wantFail bool
	}{
		{
			name: "one failing subtest",
			input: `=== RUN   TestA
--- PASS: TestA (0.10s)
=== RUN   TestB
=== RUN   TestB/one
=== RUN   TestB/two
    --- PASS: TestB/one (0.01s)
    --- FAIL: TestB/two (0.01s)
--- FAIL: TestB (0.02s)
FAIL
`,
			wantSub:  "e2e subtests: 1 passed, 1 failed, 0 skipped",
			wantTop:  "e2e: 1 passed, 1 failed, 0 skipped",
			wantFail: true,
		},
		{
			name: "nested subtests and a skip",
			input: `--- PASS: TestA (0.10s)
        --- PASS: TestA/x/y (0.01s)
    --- SKIP: TestA/z (0.00s)
--- SKIP: TestC (0.00s)
PASS
`,
			wantSub: "e2e subtests: 1 passed, 0 failed, 1 skipped",
			wantTop: "e2e: 1 passed, 0 failed, 1 skipped",
		},
		{
			name:     "no test ran",
			input:    "ok  \tpkg\t0.01s [no tests to run]\n",
			wantSub:  "e2e subtests: 0 passed, 0 failed, 0 skipped",
			wantTop:  "e2e: 0 passed, 0 failed, 0 skipped",
			wantFail: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("bash", "e2e-summary.sh")
			cmd.Stdin = strings.NewReader(tc.input)
			out, err := cmd.Output()
			if failed := err != nil; failed != tc.wantFail {
				t.Errorf("exit error = %v, want failure %v", err, tc.wantFail)
			}
			lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if len(lines) < 2 {
				t.Fatalf("output too short:\n%s", out)
			}
			if got := lines[len(lines)-2]; got != tc.wantSub {
				t.Errorf("subtest line = %q, want %q", got, tc.wantSub)
			}
			if got := lines[len(lines)-1]; got != tc.wantTop {
				t.Errorf("last line = %q, want %q", got, tc.wantTop)
			}
			if !strings.HasPrefix(string(out), tc.input) {
				t.Errorf("the go test output was not passed through unchanged:\n%s", out)
			}
		})
	}
}
