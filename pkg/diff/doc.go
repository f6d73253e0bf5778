// Package diff computes which fields changed between two versions of a
// Kubernetes object, with old and new values for scalars:
//
//	.spec.replicas 3->5
//	.spec.template.spec.containers[name="nginx"].image nginx:1.25->nginx:1.26
//	.metadata.labels.tier +web
//
// Lists whose items are objects with a unique "name" (containers, ports,
// volumes) are matched by name, and lists of conditions by "type", so that a
// reordering or an insertion is not reported as a change of every item; other
// lists are compared index by index. Paths are structured-merge-diff
// fieldpath.Paths, so they print the way the API server prints them and can be
// checked against managedFields sets.
//
// Package diff knows nothing about managers, watches or printing; it compares
// two maps.
package diff
