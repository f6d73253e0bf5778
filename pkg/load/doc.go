// Package load is the engine of kubectl rv conflicts --view top and
// --view wasted: who loads the API server. It reads the same audit events
// as package conflicts (pkg/audit), but counts every request, reads as
// well as writes, and answers three questions:
//
//   - the top table: requests grouped by one or more keys (user, writer,
//     verb, resource, status, namespace, object), each group with its
//     count, its share, its rate over the window, its latency (p50 and p99
//     of requestReceivedTimestamp to stageTimestamp), when it was first and
//     last seen, its busiest objects and its status codes;
//   - wasted writes per writer: creates refused with AlreadyExists, updates
//     and patches that changed nothing, and other 409s;
//   - hot loops: one client reading one object, or writing it without
//     effect, faster than a rate for longer than a span (hot.go).
//
// Memory grows with the groups, the writers and the client-object pairs
// active within a span, not with the log's length: latencies are kept
// exactly up to a few dozen per group and then in a histogram, and a
// group's busiest objects in a Space-Saving summary.
//
// An update or patch changed nothing when the resourceVersion it returned
// is one the object already had before the request was received: the
// client's precondition, or the version another request of the log
// returned. Only RequestResponse-level events carry that version, so at
// Metadata level a writer's no-op writes are unknown, not zero.
//
// Example: at RequestResponse level, writer W gets configmap c at
// 10:00:00.000 (resourceVersion 7) and updates it at .010 with
// precondition 7; the update returns 7. The update is a no-op and wasted.
// Had it returned 8, it would have changed the object.
//
// Package load does not read flags or print.
package load
