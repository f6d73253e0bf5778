package predict

import (
	"context"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
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

// FindingVerdicts are the verdicts that are findings, with what each
// means and its one-line fix, for the reports that explain them (a CI
// report's rules). The fixes of the two 409s are conflicts' fixes of the
// same causes.
var FindingVerdicts = []VerdictInfo{
	{Conflict, "the write carries a resourceVersion that is no longer the object's: the server would answer 409 Conflict", conflicts.Fix(conflicts.Contention)},
	{ApplyConflict, "a server-side apply without force would get a 409: other managers own fields it sets to other values", conflicts.Fix(conflicts.ApplyConflict)},
	{Clobber, "the write succeeds, but overwrites or removes fields other managers own: the silent lost update", "write with server-side apply, which shows the conflict, or leave the fields other managers own out of the manifest"},
	{Invalid, "the server would refuse the request (400, 415 or 422)", "change the manifest or patch as the server's message says"},
	{ServerError, "the server would fail this request with a 500 every time: a handler error, not an outage, so a retry cannot succeed", "send it another way: for a strategic merge patch whose list merge key is not unique, a JSON patch or server-side apply"},
	{Unknown, "offline, the API server's rules for the object did not run, so whether it would refuse the write or store other values is not known", "give the custom resource's CRD with --schema, or predict against the cluster (without --offline)"},
}

// VerdictInfo is what a verdict means and how to fix it.
type VerdictInfo struct {
	Verdict Verdict
	Help    string
	Fix     string
}

// FindingClass is the Findings class (--fail-on's word) of a verdict; ""
// for ok and not-found, which are no finding.
func FindingClass(v Verdict) string {
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
			if k := FindingClass(m.Verdict); k != "" {
				c[k]++
			}
		}
	}
	return c
}
