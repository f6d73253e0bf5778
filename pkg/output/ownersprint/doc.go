// Package ownersprint renders the result of the owners engine
// (pkg/owners): the ownership tree (--view tree), the object's YAML
// annotated with its owners (--view blame: kubectl's YAML, written by
// sigs.k8s.io/yaml, with the owners as comments), one row per owner of each
// owned field (--view table), one row per managedFields entry (--view
// summary), the fields owned by managers other than the expected one
// (--expect-manager, --drift), the weight of managedFields per kind and for
// the heaviest objects (--view size; kind OwnersSizeReport with -o
// json|yaml), the versioned structured report for -o json|yaml (kind
// OwnersReport, documented in docs/owners.md), and the CI report for -o
// github, junit and sarif (CIReport: drift and hazards as findings, a
// group per object, a case per hazard type and the drift check).
//
// With a Locate (objects read with -f), the report gives each field its
// line and column in the file, -o wide adds a POSITION column to the table
// and drift views, and CI findings point at their field's line; Locate
// itself (pkg/positions, through cmdutil.Locator) is the command's.
//
// Every view shows the hazards the engine kept. Secret values (data,
// stringData and kubectl's last-applied annotation of a Secret) are hidden
// unless Options.ShowSecrets is set; no other view prints values. Server
// strings are escaped for the terminal, and in the blame view also kept on
// one line so that comments cannot break the YAML.
//
// Package ownersprint decides how ownership looks and nothing else: it
// walks the trees, entries and hazards pkg/owners returns (using
// pkg/managedfields' types), but it does not decode managedFields, filter
// fields or find hazards (pkg/owners and pkg/managedfields do), and it does
// not load objects (pkg/objects does).
package ownersprint
