// Package etcdplay is the engine of `kubectl rv simulate etcdctl`, the etcd
// playground: it parses etcdctl-style commands (put, get, del, txn in
// etcdctl's stdin syntax, compact, watch), one from the command line or a
// script of them, and runs them on an mvcc.WatchKV: the embedded store
// (pkg/mvcc) or a real etcd (pkg/etcdclient).
//
// It owns the command syntax and its errors (every parse error wraps
// ErrSyntax and names its source line) and the order in which results and
// watch responses come out. It does not own the store's semantics
// (pkg/mvcc), talking to etcd (pkg/etcdclient) or printing:
// pkg/output/etcdprint renders results the way etcdctl does (simple and
// -w json).
package etcdplay
