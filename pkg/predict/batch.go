package predict

import "context"

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

// FailOn says which verdicts are findings (kubectl rv predict --fail-on,
// FailOnConflict by default: a predicted 409 is the finding predict exists
// for).
type FailOn string

// The FailOn values.
const (
	// FailOnNothing counts no verdict.
	FailOnNothing FailOn = "none"
	// FailOnConflict counts conflict and apply-conflict.
	FailOnConflict FailOn = "conflict"
	// FailOnClobber counts clobber.
	FailOnClobber FailOn = "clobber"
	// FailOnUnknown counts unknown: the offline engine could not judge
	// the write.
	FailOnUnknown FailOn = "unknown"
	// FailOnAny counts conflicts, clobbers, invalid requests, server
	// errors and unknown verdicts: every method that is not known to
	// succeed cleanly (ok) or to find no object (not-found). A gate that
	// asks for any finding is not passed by a write nobody could judge.
	FailOnAny FailOn = "any"
)

// FailOnNames are the --fail-on values, for help and completion.
var FailOnNames = []string{string(FailOnNothing), string(FailOnConflict), string(FailOnClobber), string(FailOnUnknown), string(FailOnAny)}

// ParseFailOn checks a --fail-on value.
func ParseFailOn(s string) (FailOn, bool) {
	switch f := FailOn(s); f {
	case FailOnNothing, FailOnConflict, FailOnClobber, FailOnUnknown, FailOnAny:
		return f, true
	}
	return FailOnNothing, false
}

// Matches reports whether f counts v as a finding.
func (f FailOn) Matches(v Verdict) bool {
	switch v {
	case Conflict, ApplyConflict:
		return f == FailOnConflict || f == FailOnAny
	case Clobber:
		return f == FailOnClobber || f == FailOnAny
	case Invalid, ServerError:
		return f == FailOnAny
	case Unknown:
		return f == FailOnUnknown || f == FailOnAny
	}
	return false
}

// Findings counts the method predictions of results whose verdict f
// counts.
func (f FailOn) Findings(results []Result) int {
	n := 0
	for _, r := range results {
		for _, m := range r.Methods {
			if f.Matches(m.Verdict) {
				n++
			}
		}
	}
	return n
}
