// Package conformance generates randomized, seeded etcd operation histories
// (puts, txns with compares, deletes and recreates, ranges at past
// revisions, compactions, watches) and runs each history against two
// engines, reporting the first response that differs. The conformance test
// runs it against the embedded store and a real etcd.
//
// It does not own either engine, and it compares only what etcd
// guarantees: response headers by revision (cluster and member IDs differ),
// every key-value field, errors by sentinel, and watch events as one
// ordered stream per watcher (response boundaries are timing-dependent).
package conformance
