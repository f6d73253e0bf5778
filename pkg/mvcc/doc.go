// Package mvcc is kubectl-rv's embedded, etcd-exact revision store: an
// in-process multi-version key-value store with etcd's revision semantics
// (global revision, per-key create/mod revision and version, transactions
// with compares, ranges at past revisions, compaction with etcd's errors,
// watches from a revision and progress notifications).
//
// It owns the deterministic state machine only: no goroutines, no clock, no
// randomness. The same sequence of calls always gives the same answers, so
// a discrete-event simulator can drive it in virtual time; periodic work
// (progress notifications, compaction) happens when the driver calls
// NotifyProgress or Compact. Watchers are pull-based (Watcher.Drain).
//
// It does not own the API-server layer (objects, resourceVersion,
// conflicts: pkg/simulate/apiserver), talking to a real etcd
// (pkg/etcdclient implements the same WatchKV interface), leases, auth, a
// command-line syntax (pkg/etcdplay parses etcdctl's) or the etcd wire
// format (pkg/output/etcdprint renders etcdctl-shaped output).
//
// Semantics follow etcd v3.6 server/storage/mvcc and server/etcdserver/txn:
//
//	empty store                      rev 1
//	put k1 v1                        rev 2   k1: create 2, mod 2, ver 1
//	put k1 v2                        rev 3   k1: create 2, mod 3, ver 2
//	txn [mod(k1)=3] put k1 v3,put k2 rev 4   one revision for the whole txn
//	del k1                           rev 5   delete event carries mod 5
//	del k1                           rev 5   nothing deleted: no revision
//	get k1 --rev=4                   v3 (header revision 5)
//	put k1 v4                        rev 6   k1: create 6, mod 6, ver 1
//	compact 5                        reads at rev < 5 fail with ErrCompacted
package mvcc
