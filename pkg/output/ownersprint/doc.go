// Package ownersprint renders kubectl rv owners reports: the ownership tree
// (--view tree), the object's YAML annotated with its owners (--view blame,
// still valid YAML: owners are comments), one row per owned field (--view
// table), one row per managedFields entry (--view summary), and the
// versioned structured report for -o json|yaml (kind OwnersReport,
// documented in docs/owners.md).
//
// Every view shows the hazards pkg/managedfields found. Secret values
// (data, stringData and kubectl's last-applied annotation of a Secret) are
// hidden unless Options.ShowSecrets is set; no other view prints values.
// Server strings are escaped for the terminal, and in the blame view also
// kept on one line so that comments cannot break the YAML.
//
// Package ownersprint decides how ownership looks; it does not decode
// managedFields (pkg/managedfields does) or load objects (pkg/objects).
package ownersprint
