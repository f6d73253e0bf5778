// Package completion is kubectl rv completion: how to set up shell
// completion of kubectl rv, which goes through kubectl's own completion and
// the helper kubectl_complete-rv (kubectl 1.26 or newer). It prints those
// steps; it registers no completion script of its own, since there is no
// "rv" command to complete.
//
// The candidates themselves come from cobra's hidden __complete command on
// the root and from the completion functions of pkg/cmd/cmdutil.
package completion
