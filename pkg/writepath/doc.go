// Package writepath is the API server's write path in process, short of
// storage: given a kind's registry rules (Type), the stored object (or
// none) and a write request (create, update, one of the four patch types
// or server-side apply, with field manager, subresource and force), it
// returns the object the server would store, or the error the server
// would answer with:
//
//   - preconditions: 404 for a missing object, 409 Conflict with the
//     server's message when the request's resourceVersion is not the
//     stored one, 422 for an update without one where the kind refuses
//     unconditional updates, 400 for a patch that renames the object;
//   - patches: apimachinery's JSON patch, JSON merge patch and strategic
//     merge patch code (gopkg.in/evanphx/json-patch.v4, strategicpatch),
//     applied to the stored object as the server applies them, with its
//     status codes (415 for a strategic merge patch of a custom resource);
//   - the registry's BeforeCreate/BeforeUpdate and the strategy's
//     PrepareForUpdate: uid and creationTimestamp kept, the status
//     subresource split, generation bumped by the kind's rule;
//   - the kind's decoding of a request body (unknown fields dropped,
//     defaults filled in), the defaults after a server-side apply, and its
//     validation, where its Type has them;
//   - managedFields kept by the API server's own field manager
//     (pkg/managedfields), server-side apply and its conflicts included.
//
// Both `predict --offline` (pkg/predict, which never stores anything) and
// the simulator's API server (pkg/simulate/apiserver, over a revision
// store) run every write through it, so the two cannot drift apart. The
// name says what it holds: the write path, not a server.
//
// Example: a Deployment is stored at resourceVersion "11" with generation
// 2. An update carrying resourceVersion "10" gets 409; one carrying "11"
// (or none: Deployments allow unconditional updates) that changes
// .spec.replicas returns the object with generation 3 and the writer
// owning .spec.replicas in managedFields; a merge patch
// {"metadata":{"resourceVersion":"10"}} gets 409 like the stale update.
//
// It does not store, read, list or watch; it does not assign
// resourceVersions or detect no-op writes (a storage concern: the server
// compares the encoded bytes); and it does not run admission. The
// decoding, defaulting and validation of the built-in kinds and of custom
// resources run behind Type.Decode, Type.Default and Type.Validate; the
// API server's own code for them is pkg/serverrules (Rules), which the
// commands hand to predict and the simulator, so this package links
// neither k8s.io/kubernetes nor apiextensions-apiserver.
package writepath
