// Package krew owns kubectl-rv's krew plugin manifest: rendering the template
// krew/rv.yaml with a release's archive URIs and sha256 sums (Render), and
// checking a manifest against krew's rules (Validate), since krew's own
// validator module cannot be used here. hack/release.sh renders through
// hack/pack, and the tests check both the template and rendered manifests.
//
// It does not build or pack binaries (hack/release.sh and hack/pack do) and
// it does not talk to krew or its index.
package krew
