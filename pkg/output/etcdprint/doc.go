// Package etcdprint renders the results of `kubectl rv simulate etcdctl`
// exactly as etcdctl v3 does: the simple format (etcdctl's default) and
// -w json, whose shape is etcdctl's json.Marshal of the gRPC responses
// (snake_case fields, omitempty everywhere, keys and values base64).
//
// It owns only the rendering. Results come from pkg/etcdplay.
package etcdprint
