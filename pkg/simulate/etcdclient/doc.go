// Package etcdclient runs the simulator's store operations (mvcc.WatchKV)
// on a real etcd through go.etcd.io/etcd/client/v3, for
// `--etcd-endpoints URL`. It translates requests and responses one to one
// and maps etcd's gRPC errors to the mvcc sentinel errors, so callers and
// the conformance test compare both engines with the same code.
//
// It does not own the semantics (pkg/simulate/mvcc documents them) nor any
// retry or reconnection policy beyond clientv3's own. Watches run one
// goroutine each, ending when the watch or the client is closed.
package etcdclient
