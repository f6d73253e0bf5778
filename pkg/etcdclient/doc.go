// Package etcdclient runs the embedded store's operations (mvcc.WatchKV)
// on a real etcd, for `--etcd-endpoints URL`: `simulate run` keeps its
// objects there, `simulate etcdctl` runs its commands there, and the
// conformance test (internal/mvccconformance, test/e2e) compares both
// engines through it. It translates requests and responses one to one and
// maps etcd's error statuses to the mvcc sentinel errors, so callers use
// the same code for both engines.
//
// It speaks etcd's gRPC API itself (grpc.go: gRPC over net/http's HTTP/2;
// wire.go: the few messages it needs, encoded with protobuf's protowire)
// rather than linking go.etcd.io/etcd/client/v3: that client brings gRPC,
// zap and etcd's generated code into every command's start-up (61 package
// inits, 1.46 MB allocated before main, 9.8 MB of binary) for the two
// commands that talk to etcd. The tests hold the encoding byte for byte to
// etcd's generated code and run the conformance suite against a real etcd.
//
// It does not own the semantics (pkg/mvcc documents them), nor
// any retry or reconnection: a call that fails reports it, and a watch
// whose stream breaks ends. Each watch has a stream of its own, read by one
// goroutine, ending when the watch or the client is closed.
package etcdclient
