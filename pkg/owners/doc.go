// Package owners is the engine of kubectl rv owners: Analyze takes loaded
// objects and a Config (which fields to keep: a manager, a field subtree,
// the shared fields) and returns a Result holding, per object, the ownership
// decoded from its managedFields, the ownership left after filtering, the
// managedFields entries to list, and the hazards; and for the whole run the
// number of findings (what --fail-on-hazard fails on) and whether the
// filter kept anything.
//
// With Config.Drift, Analyze also lists per object the fields owned by a
// manager other than the expected one (given, or inferred as the Apply
// manager owning the most leaves): what --expect-manager and --drift fail
// on. Size is the second entry point: it weighs managedFields (bytes,
// entries, the Update cap, Apply managers with generated names) over a
// stream of objects, keeping per-kind totals and the heaviest objects only.
//
// The decoding, filtering and hazard rules themselves live in
// pkg/managedfields; this package applies them to a set of objects and says
// which object a decoding error belongs to. Package owners does not load
// objects (pkg/objects does), parse flags (pkg/cmd does) or print
// (pkg/output/ownersprint does).
package owners
