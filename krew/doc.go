// Package krew owns kubectl-rv's krew plugin manifest: rendering the template
// krew/rv.yaml with a release's archive URIs and sha256 sums (Render),
// checking a manifest against krew's rules (Validate), since krew's own
// validator module cannot be used here, and checking a built release
// against its manifest (CheckRelease: checksums, each archive's files).
// hack/release.sh renders and checks through hack/pack; the release e2e
// test and the unit tests call the same functions.
//
// It does not build or pack binaries (hack/release.sh and hack/pack do) and
// it does not talk to krew or its index.
package krew
