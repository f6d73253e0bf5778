// Package etcdclient runs the embedded store's operations (mvcc.WatchKV)
// on a real etcd through go.etcd.io/etcd/client/v3, for `--etcd-endpoints
// URL`: `simulate run` keeps its objects there, `simulate etcdctl` runs its
// commands there, and the conformance test (internal/mvccconformance,
// test/e2e) compares both engines through it. It translates requests and
// responses one to one and maps etcd's gRPC errors to the mvcc sentinel
// errors, so callers use the same code for both engines.
//
// It does not own the semantics (pkg/simulate/mvcc documents them) nor any
// retry or reconnection policy beyond clientv3's own. Watches run one
// goroutine each, ending when the watch or the client is closed.
package etcdclient
