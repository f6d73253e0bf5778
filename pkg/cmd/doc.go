// Package cmd assembles kubectl rv: the root command (NewCmdRV), with
// kubectl's global flags, and its commands, one package each
// (pkg/cmd/<command>: flags, options and the wiring to its engine), which
// share pkg/cmd/cmdutil. Main runs it and returns the exit code.
//
// The engines: watch is pkg/inspect (the cluster through pkg/follow),
// owners pkg/owners (over pkg/managedfields), lag pkg/lag, predict
// pkg/predict (through pkg/writepath; the offline rules are
// pkg/serverrules/crd's), simulate pkg/simulate and pkg/etcdplay,
// conflicts pkg/conflicts (events from pkg/audit and its log services'
// readers), churn pkg/churn, doctor pkg/doctor and leases pkg/leases.
// Commands hold no business logic and engines never import cobra.
package cmd
