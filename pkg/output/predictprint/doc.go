// Package predictprint renders kubectl rv predict reports: the versioned
// PredictReport for -o json|yaml and the method table. It owns the report
// schema (documented in docs/predict.md); it does not predict anything.
package predictprint
