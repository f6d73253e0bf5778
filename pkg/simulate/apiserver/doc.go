// Package apiserver is kube-apiserver's storage-facing behaviour on top of
// a revision store: objects under registry keys (/registry/configmaps/ns/name
// for built-ins, /registry/<group>/<resource>/ns/name for custom resources),
// resourceVersion = the key's mod_revision, create guarded by
// mod_revision == 0 (409 AlreadyExists), every other write guarded by the
// stored mod_revision (409 Conflict with the server's message), writes
// whose bytes equal the stored bytes skipped without a new revision,
// delete with preconditions, get, list and watch with resourceVersion
// semantics and 410 Gone below the compaction.
//
// What a write stores is decided by the shared write path (pkg/writepath),
// the same code `predict --offline` runs: the registry's rules (the
// resourceVersion precondition, unconditional updates, generation, the
// status subresource), the four patch types and managedFields kept by the
// API server's own field manager, server-side apply included.
//
// Example: a ConfigMap created at revision 100 has resourceVersion "100".
// Clients A and B read it. B's update with resourceVersion 100 commits at
// 101. A's update with 100 fails the compare mod_revision == 100 and gets
// 409; A reads 101, updates with 101 and commits at 102.
//
// It does not model admission, defaulting, validation, finalizers or the
// watch cache's own window: the watch window is the store's history.
package apiserver
