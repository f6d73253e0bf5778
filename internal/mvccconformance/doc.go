// Package mvccconformance is a test harness: it runs one seeded random
// history of etcd operations (puts, txns with compares, deletes and
// recreates, ranges at past revisions, compactions, watches, progress
// requests) on two mvcc.WatchKV engines, operation by operation, and
// reports the first response in which they differ.
//
// Only tests import it: its own test runs two embedded stores (to catch
// nondeterminism), and test/e2e/simulate_conformance_test.go holds the
// embedded store (pkg/simulate/mvcc) to a real etcd (pkg/etcdclient). It
// does not own either engine.
package mvccconformance
