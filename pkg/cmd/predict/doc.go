// Package predict is kubectl rv predict: its flags, options and wiring to
// the engine pkg/predict, against the cluster's dry runs or --offline on
// the API server's rules (pkg/serverrules/crd) with --live and --schema.
package predict
