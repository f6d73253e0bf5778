// Package leasesprint renders a leases.Report (kubectl rv leases): the
// locks as a table (their state, and in a watch or a history their
// renewals), the takeovers, expiries, acting-while-not-leader windows and
// gaps; the timeline view's holders and moments; or the versioned
// LeasesReport document for -o json|yaml. It only renders: the counting
// and the findings are pkg/leases'.
package leasesprint
