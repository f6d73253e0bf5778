// Package lagprint renders the report of kubectl rv lag: the LagReport
// document of -o json|yaml (schema in docs/lag.md), and the table of lagging
// objects with a summary line per type and the explanations below it.
//
// Package lagprint decides how a lag report looks; what lags is decided by
// pkg/lag.
package lagprint
