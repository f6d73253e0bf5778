// Package cmd holds kubectl-rv's cobra commands. Each subcommand is a
// NewCmdX(f, streams) constructor and an XOptions with Complete, Validate and
// Run: flags become one typed config, Run calls an engine package
// (pkg/inspect, pkg/managedfields, pkg/lag, pkg/simulate) and hands its
// result to pkg/output. Commands hold no business logic and engines never
// import cobra.
package cmd
