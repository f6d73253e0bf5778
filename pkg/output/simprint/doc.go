// Package simprint renders the results of kubectl rv simulate: the
// per-actor table, the step-by-step story of a run, the versioned
// SimulationReport and ScenarioList objects, and the static SVG and HTML
// pictures (writers over virtual time, latency distributions).
//
// It owns how simulation results look, not what they are: pkg/simulate
// computes them.
package simprint
