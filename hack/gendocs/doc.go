// Command gendocs writes one Markdown page per kubectl rv command into
// docs/commands (hack/update-docs.sh) with cobra/doc, from the cobra
// commands themselves: the usage line, description, examples and flags
// users see with --help. It adds what cobra/doc does not: a DO NOT EDIT
// header, a link to the command's hand-written guide (docs/<command>.md),
// an index (README.md), and the removal of pages of commands that are
// gone. hack/verify-docs.sh runs it into a temporary folder and fails when
// the committed pages differ, so the docs cannot drift from the binary.
//
//	go run ./hack/gendocs -out docs/commands -docs docs
package main
