// Package conflicts is the engine of kubectl rv conflicts: it reads API
// server audit events (pkg/audit) and says which writes collide, who loses
// to whom, whether losers retry or give up, and why each 409 happened
// (Analyze). A Collector does the same for events handed to it one by one.
//
// Analyze reads the log as a stream in completion order and keeps, per
// object, its writers and readers by number, the chains of the writers
// whose last attempt was a 409, each reader's last get and a few seconds
// of records, so that memory grows with objects, writers and readers, not
// with the log's length (see stream.go); a log it cannot follow that way
// (out of order beyond a few seconds) is read again keeping every record,
// stdin from a copy made while it was read. Events are decoded on several goroutines (pkg/audit), made into
// records on one and analysed on another.
//
// A writer is user + field manager (from requestURI's ?fieldManager=) +
// pod (user.extra authentication.kubernetes.io/pod-name); its user agent is
// shown, not keyed on, because controller-runtime managers share one. Reads
// carry no field manager, so a writer's re-reads are the gets of the same
// user, pod and user agent.
//
// Example, at Metadata level: writer A gets configmap c at 10:00:00.000,
// writer B updates c successfully at .004, A's update is rejected with 409
// at .005, A gets c again at .006 and updates successfully at .008. A's
// attempts: 2, 409s: 1, one retry chain of two steps with a re-read, no
// give-up; A lost to B (the success between A's read and its rejection);
// the cause is contention. Had the success at .004 been A's own, the cause
// would be a stale own cache. With RequestResponse events the winners are
// exact: the successes whose resulting resourceVersion is newer than the
// loser's precondition.
//
// A give-up is a 409 after which the same writer makes no further attempt
// on the object within the retry window: the end of a retry chain that did
// not succeed (client-go's RetryOnConflict giving up counts once, not once
// per 409).
//
// Package conflicts does not read flags or print.
package conflicts
