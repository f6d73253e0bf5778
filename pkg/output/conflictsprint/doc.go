// Package conflictsprint renders kubectl rv conflicts' report: a table per
// view (objects, writers, timeline, causes) and the versioned
// ConflictsReport document for -o json|yaml.
//
// Package conflictsprint does not read audit logs or analyse them
// (pkg/audit, pkg/conflicts): it only renders a conflicts.Report.
package conflictsprint
