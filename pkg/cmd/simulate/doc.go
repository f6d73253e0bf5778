// Package simulate is kubectl rv simulate and its subcommands run, list
// and etcdctl: flags, options and wiring to the engines pkg/simulate and
// pkg/etcdplay.
package simulate
