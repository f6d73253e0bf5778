package predict

import (
	"context"

	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
)

// PredictEach predicts a batch of objects one after the other, in order,
// and stops at the first failure, returned as an *ItemError. It suits
// executors that talk to a cluster: one object's requests at a time, and
// none after one failed (PredictAll suits in-process executors).
func PredictEach(ctx context.Context, cfg Config, items []Item) ([]Result, error) {
	out := make([]Result, 0, len(items))
	for i, it := range items {
		r, err := Predict(ctx, cfg, it.Input, it.Executor)
		if err != nil {
			return nil, &ItemError{Index: i, Err: err}
		}
		out = append(out, r)
	}
	return out, nil
}

// Findings are what predict --fail-on fails on (conflict by default: a
// predicted 409 is the finding predict exists for). any is every class:
// a gate that asks for any finding is not passed by a write nobody could
// judge.
var Findings = findings.Vocabulary{
	{Name: "conflict", Noun: "predicted 409", Help: "a 409: conflict or apply-conflict"},
	{Name: "clobber", Noun: "clobber", Help: "succeeds, but overwrites or removes other managers' fields"},
	{Name: "invalid", Noun: "refused write", Help: "invalid (422/415) or server-error"},
	{Name: "unknown", Noun: "unjudged write", Help: "offline: the API server's rules for the object did not run"},
}

// DefaultFailOn is --fail-on's default.
const DefaultFailOn = "conflict"

// findingClass is the Findings class of a verdict; "" for ok and
// not-found, which are no finding.
func findingClass(v Verdict) string {
	switch v {
	case Conflict, ApplyConflict:
		return "conflict"
	case Clobber:
		return "clobber"
	case Invalid, ServerError:
		return "invalid"
	case Unknown:
		return "unknown"
	}
	return ""
}

// Counts counts the method predictions of results by Findings class.
func Counts(results []Result) findings.Counts {
	c := findings.Counts{}
	for _, r := range results {
		for _, m := range r.Methods {
			if k := findingClass(m.Verdict); k != "" {
				c[k]++
			}
		}
	}
	return c
}
