// Command gendocs writes one Markdown page per kubectl rv command into
// docs/commands (hack/update-docs.sh), from the cobra commands themselves:
// the usage line, description, examples and flags users see with --help.
// hack/verify-docs.sh runs it into a temporary folder and fails when the
// committed pages differ, so the docs cannot drift from the binary.
//
//	go run ./hack/gendocs -out docs/commands -docs docs
package main
