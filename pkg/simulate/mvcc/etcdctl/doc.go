// Package etcdctl parses etcdctl-style commands (put, get, del, txn in
// etcdctl's stdin syntax, compact, watch) and runs them on an
// mvcc.WatchKV: the embedded store or a real etcd.
//
// It owns the command syntax and its errors (every parse error wraps
// ErrSyntax and names its source line) and the order in which results and
// watch responses come out. It does not print: pkg/output/etcdprint renders
// results the way etcdctl does (simple and -w json).
package etcdctl
