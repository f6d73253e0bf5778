// Package apiserver is kube-apiserver's storage-facing behaviour on top of
// a revision store: objects under registry keys (/registry/configmaps/ns/name
// for built-ins, /registry/<group>/<resource>/ns/name for custom resources),
// resourceVersion = the key's mod_revision, create guarded by
// mod_revision == 0 (409 AlreadyExists), update guarded by the stored
// mod_revision (409 Conflict with the server's message) or unconditional
// where the type allows it (else 422), writes whose bytes equal the stored
// bytes skipped without a new revision, generation bumped by each type's
// rules, the status subresource, delete with preconditions, list and watch
// with resourceVersion semantics and 410 Gone below the compaction, the
// four patch types (apimachinery's JSON patch, merge patch and strategic
// merge patch code) and managedFields kept by the API server's own field
// manager (pkg/managedfields), server-side apply included.
//
// Example: a ConfigMap created at revision 100 has resourceVersion "100".
// Clients A and B read it. B's update with resourceVersion 100 commits at
// 101. A's update with 100 fails the compare mod_revision == 100 and gets
// 409; A reads 101, updates with 101 and commits at 102.
//
// It does not model admission, defaulting, validation, finalizers or the
// watch cache's own window: the watch window is the store's history.
package apiserver
