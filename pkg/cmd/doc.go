// Package cmd holds kubectl-rv's cobra commands. Each subcommand is a
// NewCmdX(f, streams) constructor and an XOptions with Complete, Validate and
// Run: flags become one typed config, Run makes one call to the command's
// engine and hands its result to pkg/output's printer for it. The engines:
// watch is pkg/inspect (the cluster through pkg/follow), owners
// pkg/owners (over pkg/managedfields), lag pkg/lag, predict pkg/predict
// (through pkg/writepath; the offline rules are pkg/serverrules/crd's),
// simulate pkg/simulate and pkg/etcdplay, conflicts pkg/conflicts (events
// from pkg/audit and its log services' readers), churn pkg/churn, doctor
// pkg/doctor and leases pkg/leases. Commands hold no business logic and
// engines never import cobra.
//
// pkg/cmd is the only package that binds flags: flags.go binds the ones
// several commands share (OutputFlags, SelectionFlags) into the typed
// configs of pkg/output and pkg/objects. resolve.go is the one place a
// resource type named on the command line becomes a REST mapping, through
// cli-runtime's resource.Builder. Errors are marked with pkg/exitcode's
// wrappers and turned into exit codes by exitcode.Classify in HandleError.
package cmd
