// Package predict answers "what would this write do?" for every write
// method a client can use on a Kubernetes object: update (PUT) with and
// without a resourceVersion, JSON patch, JSON merge patch (plain and with
// the resourceVersion as an optimistic lock), strategic merge patch, and
// server-side apply with and without force; and kubectl's client-side
// apply (ClientApply), whose request it computes with kubectl's own code
// (the three-way patch of the last-applied-configuration annotation, the
// live object and the manifest, or a create) before either executor sends
// it, reporting the fields the patch deletes because they left the
// manifest and what the annotation becomes.
//
// For each method it returns a verdict (ok, conflict, apply-conflict,
// invalid, clobber), the apply conflicts with their owners as the server
// lists them, the fields other managers would silently lose, the ownership
// changes per manager, the changed fields and whether metadata.generation
// would be bumped.
//
// Two executors produce the same results: the server executor sends each
// request as a server-side dry run (dryRun=All, never persisted, but still
// passed through admission webhooks), and the offline executor runs each
// request through the shared in-process write path (pkg/writepath, which
// the simulator's API server runs too) on a live object with its
// managedFields: the JSON patch, merge patch and strategic merge patch
// libraries the API server uses, the resourceVersion precondition, the
// registry's generation and status rules, and the API server's own field
// manager (pkg/managedfields.FieldManager). What the offline executor does
// not know of a kind it tells from the live object (see offlineType).
//
// A batch of targets (desired manifests, or a patch to TYPE/NAME) is first
// matched to the live objects: MatchCluster resolves kinds and namespaces
// through a Cluster the caller implements (a REST mapper and a dynamic
// client), MatchOffline finds each object among the saved live objects.
// PredictEach (one object at a time, for the cluster) or PredictAll (in
// parallel, for offline executors) then predicts the items, and FailOn
// counts the verdicts that are findings.
//
// Package predict does not parse flags, read files or print; pkg/cmd and
// pkg/output/predictprint do.
package predict
