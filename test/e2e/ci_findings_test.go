//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
)

// ciFinding is what every format of a run must hold: the exit code
// (the table's too), and a finding of rule at object, an error, whose
// message has text.
type ciFinding struct {
	code               int
	rule, object, text string
}

// rvFormats runs kubectl rv ARGS once per output format, table and the
// three CI formats, all at once (the commands that watch then watch the
// same scene for the same time), and returns each run's result by
// format.
func rvFormats(t *testing.T, args ...string) map[string]runResult {
	t.Helper()
	formats := []string{"table", "github", "junit", "sarif"}
	results := make([]runResult, len(formats))
	var wg sync.WaitGroup
	for i, f := range formats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = rvRun(append(append([]string{}, args...), "-o", f))
		}()
	}
	wg.Wait()
	out := map[string]runResult{}
	for i, f := range formats {
		if results[i].err != nil {
			t.Fatalf("kubectl rv %s -o %s: %v", strings.Join(args, " "), f, results[i].err)
		}
		out[f] = results[i]
	}
	return out
}

// runResult is one run's exit code and streams, or why it did not run.
type runResult struct {
	code           int
	stdout, stderr string
	err            error
}

// rvRun runs kubectl rv ARGS; it reports errors rather than failing the
// test, as it runs in goroutines of its own.
func rvRun(args []string) runResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cluster.Command(ctx, "kubectl", append([]string{"rv"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	r := runResult{}
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		r.err = err
	}
	r.stdout, r.stderr = out.String(), errOut.String()
	return r
}

// checkCIFormats checks every run exits with want.code, and that the CI
// formats hold the finding as an error: a ::error annotation whose title
// names the object, a JUnit failure of its rule, a SARIF result of its
// rule at the object's logical location, the SARIF valid (schema and,
// where installed, the multitool).
func checkCIFormats(t *testing.T, dir string, runs map[string]runResult, want ciFinding) {
	t.Helper()
	for f, r := range runs {
		if r.code != want.code {
			t.Errorf("-o %s: exit %d, want %d\n%s%s", f, r.code, want.code, r.stdout, r.stderr)
		}
	}
	gh := runs["github"].stdout
	t.Logf("-o github:\n%s%s", gh, runs["github"].stderr)
	if !strings.Contains(gh, "::error title=") || !strings.Contains(gh, "%3A "+want.object+"::"+want.text) {
		t.Errorf("-o github: no ::error at %s with %q\n%s", want.object, want.text, gh)
	}
	if junit := runs["junit"].stdout; !junitHasFailure(t, junit, want.rule, want.object+": error: "+want.text) {
		t.Errorf("-o junit: no %s failure at %s with %q\n%s", want.rule, want.object, want.text, junit)
	}
	sarif := runs["sarif"].stdout
	validateSARIF(t, dir, sarif)
	checkSARIFResult(t, sarif, want)
}

// checkSARIFResult looks for an error result of the finding's rule at the
// object's logical location.
func checkSARIFResult(t *testing.T, sarif string, want ciFinding) {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Message   struct{ Text string }
				Locations []struct {
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
					} `json:"logicalLocations"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarif), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("-o sarif: %v\n%s", err, sarif)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		at := r.Locations[0].LogicalLocations[0].FullyQualifiedName
		if r.RuleID == want.rule && r.Level == "error" && at == want.object && strings.Contains(r.Message.Text, want.text) {
			return
		}
		got = append(got, fmt.Sprintf("%s %s at %s", r.Level, r.RuleID, at))
	}
	t.Errorf("-o sarif: no error %s at %s with %q; results: %v", want.rule, want.object, want.text, got)
}

// sarifResultLine is the start line of the first result of rule in the
// file uri, or 0.
func sarifResultLine(t *testing.T, sarif, rule, uri string) int {
	t.Helper()
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
						Region           struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarif), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("SARIF: %v\n%s", err, sarif)
	}
	for _, r := range log.Runs[0].Results {
		if len(r.Locations) == 0 {
			continue
		}
		if p := r.Locations[0].PhysicalLocation; r.RuleID == rule && p != nil && p.ArtifactLocation.URI == uri {
			return p.Region.StartLine
		}
	}
	return 0
}

// junitHasFailure reports whether the JUnit XML parses as GitLab's and
// Jenkins' parsers read it and has a testcase failing with a failure of
// type rule, a line of whose text (a finding) starts with text.
func junitHasFailure(t *testing.T, junit, rule, text string) bool {
	t.Helper()
	var rep junitread.Report
	if err := xml.Unmarshal([]byte(junit), &rep); err != nil {
		t.Errorf("JUnit: %v", err)
		return false
	}
	for _, s := range rep.Suites {
		for _, c := range s.Cases {
			if f := c.Failure; f != nil && f.Type == rule && slices.ContainsFunc(strings.Split(f.Text, "\n"), func(l string) bool { return strings.HasPrefix(l, text) }) {
				return rep.Failures > 0
			}
		}
	}
	return false
}
