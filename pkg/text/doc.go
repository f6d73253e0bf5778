// Package text holds the small wording helpers every layer shares: counts
// with the right plural ("1 type", "2 types") and the escapers of
// strings from files and servers: Escape for the terminal (tables,
// errors, messages) and EscapeMarkup for XML, SVG and HTML (the report
// pictures and pages). It imports nothing of
// kubectl-rv, so engines (which return messages such as doctor's check
// details) and printers use the same words without engines importing the
// printing layer.
//
// It does not render or colour: that is pkg/output's job.
package text
