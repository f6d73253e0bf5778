package conflicts

import (
	"context"
	"fmt"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Job is one run of kubectl rv conflicts over audit events: the analysis,
// the simulate scenario it may also build, and the writers over a
// conflict rate.
type Job struct {
	Config
	// Scenario, when not "", is the file the scenario of the timeline's
	// object (Config.Object, or the hottest) will be written to: its name
	// goes in the scenario's header, and Origin, the logs read, too.
	Scenario string
	Origin   []string
	// ObjectName is Config.Object as the user named it, for the notes.
	ObjectName string
	// FailOnRate lists, in Result.OverRate, the writers whose conflict
	// rate exceeds it; negative is off.
	FailOnRate float64
}

// Result is what Run found.
type Result struct {
	Report *Report
	// Scenario is the simulate scenario (YAML), when Job.Scenario is set.
	Scenario []byte
	// Notes say what the report left out or did not find, for the user.
	Notes []string
	// OverRate are the writers over Job.FailOnRate, as "writer (rate%)".
	OverRate []string
	// over holds the writers over Job.FailOnRate, as Writer.String names
	// them.
	over map[string]bool
}

// Over reports whether the writer (as Writer.String names it) has a
// conflict rate over Job.FailOnRate: the writers --fail-on-rate fails on.
func (r *Result) Over(writer string) bool { return r.over[writer] }

// Run analyses the sources (Analyze), then builds the scenario, which
// reads the logs again for the write methods (PatchHints), and judges the
// rates. A log without contention to reproduce is ErrNoContention.
func Run(ctx context.Context, sources []audit.Source, job Job) (*Result, error) {
	rep, err := Analyze(ctx, sources, job.Config)
	if err != nil {
		return nil, err
	}
	res := &Result{Report: rep, Notes: notes(rep, job)}
	if job.Scenario != "" {
		var hints map[string]PatchHint
		if obj := rep.TimelineObject; obj != nil {
			if hints, err = PatchHints(ctx, sources, *obj, job.Config); err != nil {
				return nil, err
			}
		}
		if res.Scenario, _, err = BuildScenario(ScenarioInput{Report: rep, Hints: hints, Origin: job.Origin, File: job.Scenario}); err != nil {
			return nil, err
		}
	}
	if job.FailOnRate >= 0 {
		for _, w := range rep.Writers {
			if w.ConflictRate > job.FailOnRate {
				res.OverRate = append(res.OverRate, fmt.Sprintf("%s (%.1f%%)", w.Writer, 100*w.ConflictRate))
				if res.over == nil {
					res.over = map[string]bool{}
				}
				res.over[w.Writer.String()] = true
			}
		}
	}
	return res, nil
}

// notes say what the report leaves out: lines cut short, events read
// twice, dry runs, and an object never written.
func notes(rep *Report, job Job) []string {
	var out []string
	if n := rep.Input.Truncated; n > 0 {
		out = append(out, fmt.Sprintf("skipped %d last line(s) cut short (the API server was writing them); --strict makes this an error", n))
	}
	if n := rep.Input.Duplicates; n > 0 {
		out = append(out, fmt.Sprintf("%d event(s) were read twice (the same auditID and stage: overlapping rotated files, a copy of a log, overlapping exports); each is counted once", n))
	}
	if n := rep.Summary.DryRuns; n > 0 {
		out = append(out, fmt.Sprintf("left out %d dry-run write(s) (dryRun=All): they persist nothing", n))
	}
	if job.Object != nil && len(rep.Timeline) == 0 {
		out = append(out, fmt.Sprintf("no write attempt on %s in the logs", job.ObjectName))
	}
	return out
}
