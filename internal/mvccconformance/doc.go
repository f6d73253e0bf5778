// Package mvccconformance is a test harness: it generates randomized,
// seeded etcd operation histories (puts, txns with compares, deletes and
// recreates, ranges at past revisions, compactions, watches, progress
// requests) and runs each history against two mvcc.WatchKV engines,
// operation by operation, reporting the first response that differs.
//
// Only tests import it: its own test runs two embedded stores (to catch
// nondeterminism), and test/e2e/simulate_conformance_test.go holds the
// embedded store (pkg/mvcc) to a real etcd (pkg/etcdclient).
//
// It does not own either engine, and it compares only what etcd
// guarantees: response headers by revision (cluster and member IDs differ),
// every key-value field, errors by sentinel, and watch events as one
// ordered stream per watcher (response boundaries are timing-dependent).
package mvccconformance
