// Package doctorprint renders kubectl rv doctor reports: a summary row per
// resource, a table of checks for each resource that failed or warned (for
// every resource with -o wide or named types), the counts, and the
// versioned structured report for -o json|yaml (kind DoctorReport,
// documented in docs/doctor.md).
//
// It decides how verdicts look; it does not probe (pkg/doctor does).
// Server messages in Observed are escaped for the terminal by the table.
package doctorprint
