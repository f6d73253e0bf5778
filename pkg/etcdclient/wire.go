package etcdclient

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// The messages of etcd's API (etcdserverpb/rpc.proto and mvccpb/kv.proto
// at v3.6) that the client sends and reads, in protobuf's wire format.
// Field numbers are the .proto's; proto3 leaves zero values out, and so do
// the encoders, except inside a oneof, where a set field is always sent.

// errMessage reports a message that is not valid protobuf.
var errMessage = errors.New("malformed protobuf message")

// enc builds one message.
type enc struct{ b []byte }

func (e *enc) bytes(num protowire.Number, v []byte) {
	if len(v) > 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, v)
	}
}

func (e *enc) str(num protowire.Number, v string) {
	if v != "" {
		e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
		e.b = protowire.AppendString(e.b, v)
	}
}

func (e *enc) int(num protowire.Number, v int64) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(v))
	}
}

func (e *enc) bool(num protowire.Number, v bool) {
	if v {
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, 1)
	}
}

// msg appends a nested message, written by fn; it is sent even when empty
// (a oneof's member or an element of a repeated field).
func (e *enc) msg(num protowire.Number, fn func(*enc)) {
	var m enc
	fn(&m)
	e.b = protowire.AppendTag(e.b, num, protowire.BytesType)
	e.b = protowire.AppendBytes(e.b, m.b)
}

func encodeRange(e *enc, key string, o mvcc.RangeOptions) {
	e.str(1, key)
	e.str(2, o.End)
	e.int(3, o.Limit)
	e.int(4, o.Rev)
	e.bool(8, o.KeysOnly)
	e.bool(9, o.CountOnly)
}

func encodePut(e *enc, key string, value []byte, o mvcc.PutOptions) {
	e.str(1, key)
	e.bytes(2, value)
	e.bool(4, o.PrevKV)
}

func encodeDelete(e *enc, key string, o mvcc.DeleteOptions) {
	e.str(1, key)
	e.str(2, o.End)
	e.bool(3, o.PrevKV)
}

// encodeOp writes a RequestOp.
func encodeOp(e *enc, op mvcc.Op) {
	switch op.Type {
	case mvcc.OpRange:
		e.msg(1, func(m *enc) { encodeRange(m, op.Key, op.Range) })
	case mvcc.OpPut:
		e.msg(2, func(m *enc) { encodePut(m, op.Key, op.Value, op.Put) })
	case mvcc.OpDelete:
		e.msg(3, func(m *enc) { encodeDelete(m, op.Key, op.Delete) })
	}
}

// encodeCompare writes a Compare: mvcc's targets and results number as
// etcd's enums do.
func encodeCompare(e *enc, c mvcc.Compare) {
	e.int(1, int64(c.Result))
	e.int(2, int64(c.Target))
	e.str(3, c.Key)
	// target_union is a oneof: its member goes out even when zero.
	switch c.Target {
	case mvcc.CompareValue:
		e.b = protowire.AppendTag(e.b, 7, protowire.BytesType)
		e.b = protowire.AppendBytes(e.b, c.Value)
	default:
		num := protowire.Number(4 + c.Target) // version 4, create_revision 5, mod_revision 6
		e.b = protowire.AppendTag(e.b, num, protowire.VarintType)
		e.b = protowire.AppendVarint(e.b, uint64(c.Int))
	}
	e.str(64, c.End)
}

func encodeTxn(e *enc, t mvcc.Txn) {
	for _, c := range t.Compare {
		e.msg(1, func(m *enc) { encodeCompare(m, c) })
	}
	for _, op := range t.Success {
		e.msg(2, func(m *enc) { encodeOp(m, op) })
	}
	for _, op := range t.Failure {
		e.msg(3, func(m *enc) { encodeOp(m, op) })
	}
}

func encodeCompaction(e *enc, rev int64) {
	e.int(1, rev)
	e.bool(2, true) // physical: return once the history is gone
}

// encodeWatchCreate writes a WatchRequest holding a WatchCreateRequest.
func encodeWatchCreate(e *enc, key string, o mvcc.WatchOptions) {
	e.msg(1, func(m *enc) {
		m.str(1, key)
		m.str(2, o.End)
		m.int(3, o.Rev)
		m.bool(4, o.ProgressNotify)
		m.bool(6, o.PrevKV)
	})
}

// encodeWatchProgress writes a WatchRequest holding a WatchProgressRequest.
func encodeWatchProgress(e *enc) { e.msg(3, func(*enc) {}) }

// dec reads one message field by field.
type dec struct {
	b   []byte
	err error
}

// next returns the next field's number and type, or false at the end or on
// an error.
func (d *dec) next() (protowire.Number, protowire.Type, bool) {
	if d.err != nil || len(d.b) == 0 {
		return 0, 0, false
	}
	num, typ, n := protowire.ConsumeTag(d.b)
	if n < 0 {
		d.fail(n)
		return 0, 0, false
	}
	d.b = d.b[n:]
	return num, typ, true
}

func (d *dec) fail(n int) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %w", errMessage, protowire.ParseError(n))
	}
}

// varint reads a varint field's value (a field of another type is skipped
// and reads as 0, as protobuf's own decoders reject it: an error).
func (d *dec) varint(typ protowire.Type) uint64 {
	if typ != protowire.VarintType {
		d.typeErr(typ)
		return 0
	}
	v, n := protowire.ConsumeVarint(d.b)
	if n < 0 {
		d.fail(n)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) int(typ protowire.Type) int64 { return int64(d.varint(typ)) }

func (d *dec) bool(typ protowire.Type) bool { return d.varint(typ) != 0 }

// bytes reads a length-delimited field's value; it aliases the input.
func (d *dec) bytes(typ protowire.Type) []byte {
	if typ != protowire.BytesType {
		d.typeErr(typ)
		return nil
	}
	v, n := protowire.ConsumeBytes(d.b)
	if n < 0 {
		d.fail(n)
		return nil
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) typeErr(typ protowire.Type) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: unexpected wire type %d", errMessage, typ)
	}
	d.b = nil
}

// skip passes over a field this client does not read.
func (d *dec) skip(num protowire.Number, typ protowire.Type) {
	n := protowire.ConsumeFieldValue(num, typ, d.b)
	if n < 0 {
		d.fail(n)
		d.b = nil
		return
	}
	d.b = d.b[n:]
}

// sub decodes a nested message with fn, passing on its error.
func (d *dec) sub(typ protowire.Type, fn func(*dec)) {
	b := d.bytes(typ)
	if d.err != nil {
		return
	}
	s := dec{b: b}
	fn(&s)
	if s.err != nil && d.err == nil {
		d.err = s.err
	}
}

func decodeHeader(d *dec, h *mvcc.Header) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			h.ClusterID = d.varint(typ)
		case 2:
			h.MemberID = d.varint(typ)
		case 3:
			h.Revision = d.int(typ)
		case 4:
			h.RaftTerm = d.varint(typ)
		default:
			d.skip(num, typ)
		}
	}
}

// decodeKV reads an mvccpb.KeyValue; an empty value stays nil, as the
// embedded store answers.
func decodeKV(d *dec, kv *mvcc.KeyValue) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			kv.Key = string(d.bytes(typ))
		case 2:
			kv.CreateRevision = d.int(typ)
		case 3:
			kv.ModRevision = d.int(typ)
		case 4:
			kv.Version = d.int(typ)
		case 5:
			kv.Value = nil
			if v := d.bytes(typ); len(v) > 0 {
				kv.Value = append([]byte(nil), v...)
			}
		case 6:
			kv.Lease = d.int(typ)
		default:
			d.skip(num, typ)
		}
	}
}

func appendKV(d *dec, typ protowire.Type, kvs []mvcc.KeyValue) []mvcc.KeyValue {
	var kv mvcc.KeyValue
	d.sub(typ, func(s *dec) { decodeKV(s, &kv) })
	return append(kvs, kv)
}

func decodeRangeResponse(d *dec, r *mvcc.RangeResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
		case 2:
			r.KVs = appendKV(d, typ, r.KVs)
		case 3:
			r.More = d.bool(typ)
		case 4:
			r.Count = d.int(typ)
		default:
			d.skip(num, typ)
		}
	}
}

func decodePutResponse(d *dec, r *mvcc.PutResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
		case 2:
			if r.PrevKV == nil {
				r.PrevKV = &mvcc.KeyValue{}
			}
			d.sub(typ, func(s *dec) { decodeKV(s, r.PrevKV) })
		default:
			d.skip(num, typ)
		}
	}
}

func decodeDeleteResponse(d *dec, r *mvcc.DeleteResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
		case 2:
			r.Deleted = d.int(typ)
		case 3:
			r.PrevKVs = appendKV(d, typ, r.PrevKVs)
		default:
			d.skip(num, typ)
		}
	}
}

// decodeResponseOp reads a ResponseOp; a nested txn's response (which this
// client never asks for) is an error.
func decodeResponseOp(d *dec, r *mvcc.OpResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			*r = mvcc.OpResult{Type: mvcc.OpRange, Range: &mvcc.RangeResult{}}
			d.sub(typ, func(s *dec) { decodeRangeResponse(s, r.Range) })
		case 2:
			*r = mvcc.OpResult{Type: mvcc.OpPut, Put: &mvcc.PutResult{}}
			d.sub(typ, func(s *dec) { decodePutResponse(s, r.Put) })
		case 3:
			*r = mvcc.OpResult{Type: mvcc.OpDelete, Delete: &mvcc.DeleteResult{}}
			d.sub(typ, func(s *dec) { decodeDeleteResponse(s, r.Delete) })
		default:
			d.skip(num, typ)
		}
	}
	if r.Type == 0 && d.err == nil {
		d.err = fmt.Errorf("%w: a txn response holds an operation of an unknown type", errMessage)
	}
}

func decodeTxnResponse(d *dec, r *mvcc.TxnResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
		case 2:
			r.Succeeded = d.bool(typ)
		case 3:
			var op mvcc.OpResult
			d.sub(typ, func(s *dec) { decodeResponseOp(s, &op) })
			r.Responses = append(r.Responses, op)
		default:
			d.skip(num, typ)
		}
	}
}

func decodeCompactionResponse(d *dec, r *mvcc.CompactResult) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		if num == 1 {
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
			continue
		}
		d.skip(num, typ)
	}
}

func decodeEvent(d *dec, ev *mvcc.Event) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			ev.Type = mvcc.EventType(d.int(typ))
		case 2:
			d.sub(typ, func(s *dec) { decodeKV(s, &ev.KV) })
		case 3:
			if ev.PrevKV == nil {
				ev.PrevKV = &mvcc.KeyValue{}
			}
			d.sub(typ, func(s *dec) { decodeKV(s, ev.PrevKV) })
		default:
			d.skip(num, typ)
		}
	}
}

// watchResponse is etcd's WatchResponse as it came: mvcc.WatchResponse
// and whether it answers the create request. fragment (7) is skipped: this
// client never asks for fragments.
type watchResponse struct {
	mvcc.WatchResponse
	Created bool
}

func decodeWatchResponse(d *dec, r *watchResponse) {
	for num, typ, ok := d.next(); ok; num, typ, ok = d.next() {
		switch num {
		case 1:
			d.sub(typ, func(s *dec) { decodeHeader(s, &r.Header) })
		case 2:
			r.WatchID = d.int(typ)
		case 3:
			r.Created = d.bool(typ)
		case 4:
			r.Canceled = d.bool(typ)
		case 5:
			r.CompactRevision = d.int(typ)
		case 6:
			r.CancelReason = string(d.bytes(typ))
		case 11:
			var ev mvcc.Event
			d.sub(typ, func(s *dec) { decodeEvent(s, &ev) })
			r.Events = append(r.Events, ev)
		default:
			d.skip(num, typ)
		}
	}
}

// decode runs fn over a whole message and returns its error.
func decode(b []byte, fn func(*dec)) error {
	d := dec{b: b}
	fn(&d)
	return d.err
}
