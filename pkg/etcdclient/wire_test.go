package etcdclient

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// The wire format is checked against etcd's own generated messages
// (etcdserverpb, mvccpb), which only the tests link: requests this client
// encodes must decode there to what clientv3 would have sent, and
// responses etcd's code encodes must decode here to the same values.

func randBytes(r *rand.Rand) []byte {
	if r.IntN(4) == 0 {
		return nil
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func randInt(r *rand.Rand) int64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return -r.Int64N(1 << 40)
	}
	return r.Int64N(1 << 62)
}

func randKey(r *rand.Rand) string { return string(randBytes(r)) }

func randRangeOptions(r *rand.Rand) mvcc.RangeOptions {
	return mvcc.RangeOptions{End: randKey(r), Rev: randInt(r), Limit: randInt(r), KeysOnly: r.IntN(2) == 0, CountOnly: r.IntN(2) == 0}
}

func randOp(r *rand.Rand) mvcc.Op {
	switch r.IntN(3) {
	case 0:
		return mvcc.OpGet(randKey(r), randRangeOptions(r))
	case 1:
		return mvcc.OpPutKV(randKey(r), randBytes(r), mvcc.PutOptions{PrevKV: r.IntN(2) == 0})
	}
	return mvcc.OpDel(randKey(r), mvcc.DeleteOptions{End: randKey(r), PrevKV: r.IntN(2) == 0})
}

// wantRange is the RangeRequest clientv3 builds for key and o.
func wantRange(key string, o mvcc.RangeOptions) *pb.RangeRequest {
	return &pb.RangeRequest{Key: nilIfEmpty([]byte(key)), RangeEnd: nilIfEmpty([]byte(o.End)), Limit: o.Limit, Revision: o.Rev, KeysOnly: o.KeysOnly, CountOnly: o.CountOnly}
}

func wantOp(op mvcc.Op) *pb.RequestOp {
	switch op.Type {
	case mvcc.OpRange:
		return &pb.RequestOp{Request: &pb.RequestOp_RequestRange{RequestRange: wantRange(op.Key, op.Range)}}
	case mvcc.OpPut:
		return &pb.RequestOp{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: nilIfEmpty([]byte(op.Key)), Value: nilIfEmpty(op.Value), PrevKv: op.Put.PrevKV}}}
	}
	return &pb.RequestOp{Request: &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: &pb.DeleteRangeRequest{Key: nilIfEmpty([]byte(op.Key)), RangeEnd: nilIfEmpty([]byte(op.Delete.End)), PrevKv: op.Delete.PrevKV}}}
}

func wantCompare(c mvcc.Compare) *pb.Compare {
	out := &pb.Compare{Result: pb.Compare_CompareResult(c.Result), Target: pb.Compare_CompareTarget(c.Target), Key: nilIfEmpty([]byte(c.Key)), RangeEnd: nilIfEmpty([]byte(c.End))}
	switch c.Target {
	case mvcc.CompareVersion:
		out.TargetUnion = &pb.Compare_Version{Version: c.Int}
	case mvcc.CompareCreate:
		out.TargetUnion = &pb.Compare_CreateRevision{CreateRevision: c.Int}
	case mvcc.CompareMod:
		out.TargetUnion = &pb.Compare_ModRevision{ModRevision: c.Int}
	case mvcc.CompareValue:
		// clientv3 sends the value even when empty ([]byte of a string
		// is never nil), and etcd compares only with a value present.
		out.TargetUnion = &pb.Compare_Value{Value: append([]byte{}, c.Value...)}
	}
	return out
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// normalize re-encodes m with etcd's code, so that nil and empty compare
// equal the way the wire format sees them.
type marshaler interface {
	Marshal() ([]byte, error)
}

func sameWire(t *testing.T, what string, got []byte, want marshaler) {
	t.Helper()
	w, err := want.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, w) {
		t.Errorf("%s: encoded %x, etcd's code encodes %x (%+v)", what, got, w, want)
	}
}

// TestRequestsEncodeAsEtcdsCode: every request this client sends is
// byte for byte what etcd's generated code marshals for the message
// clientv3 builds (fields in number order, zero values left out, a oneof's
// member always written).
func TestRequestsEncodeAsEtcdsCode(t *testing.T) {
	r := rand.New(rand.NewPCG(20261124, 1))
	for i := range 2000 {
		key := randKey(r)
		ro := randRangeOptions(r)
		var e enc
		encodeRange(&e, key, ro)
		sameWire(t, fmt.Sprintf("%d: range", i), e.b, wantRange(key, ro))

		txn := mvcc.Txn{}
		want := &pb.TxnRequest{}
		for range r.IntN(4) {
			c := mvcc.Compare{Key: randKey(r), End: randKey(r), Target: mvcc.CompareTarget(r.IntN(4)), Result: mvcc.CompareResult(r.IntN(4)), Int: randInt(r)}
			if c.Target == mvcc.CompareValue {
				c.Int, c.Value = 0, randBytes(r)
			}
			txn.Compare = append(txn.Compare, c)
			want.Compare = append(want.Compare, wantCompare(c))
		}
		for range r.IntN(4) {
			op := randOp(r)
			txn.Success = append(txn.Success, op)
			want.Success = append(want.Success, wantOp(op))
		}
		for range r.IntN(3) {
			op := randOp(r)
			txn.Failure = append(txn.Failure, op)
			want.Failure = append(want.Failure, wantOp(op))
		}
		e = enc{}
		encodeTxn(&e, txn)
		sameWire(t, fmt.Sprintf("%d: txn", i), e.b, want)

		wo := mvcc.WatchOptions{End: randKey(r), Rev: randInt(r), PrevKV: r.IntN(2) == 0, ProgressNotify: r.IntN(2) == 0}
		e = enc{}
		encodeWatchCreate(&e, key, wo)
		sameWire(t, fmt.Sprintf("%d: watch", i), e.b, &pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{
			Key: nilIfEmpty([]byte(key)), RangeEnd: nilIfEmpty([]byte(wo.End)), StartRevision: wo.Rev, PrevKv: wo.PrevKV, ProgressNotify: wo.ProgressNotify}}})
	}
	var e enc
	encodeWatchProgress(&e)
	sameWire(t, "progress", e.b, &pb.WatchRequest{RequestUnion: &pb.WatchRequest_ProgressRequest{ProgressRequest: &pb.WatchProgressRequest{}}})
	e = enc{}
	encodeCompaction(&e, 42)
	sameWire(t, "compaction", e.b, &pb.CompactionRequest{Revision: 42, Physical: true})
}

func randPBKV(r *rand.Rand) *mvccpb.KeyValue {
	return &mvccpb.KeyValue{Key: randBytes(r), CreateRevision: randInt(r), ModRevision: randInt(r), Version: randInt(r), Value: randBytes(r), Lease: randInt(r)}
}

func randPBKVs(r *rand.Rand) []*mvccpb.KeyValue {
	var out []*mvccpb.KeyValue
	for range r.IntN(4) {
		out = append(out, randPBKV(r))
	}
	return out
}

func randHeader(r *rand.Rand) *pb.ResponseHeader {
	if r.IntN(5) == 0 {
		return nil
	}
	return &pb.ResponseHeader{ClusterId: r.Uint64(), MemberId: r.Uint64(), Revision: randInt(r), RaftTerm: r.Uint64()}
}

// The conversions below are what the clientv3-based client did.
func header(h *pb.ResponseHeader) mvcc.Header {
	if h == nil {
		return mvcc.Header{}
	}
	return mvcc.Header{ClusterID: h.ClusterId, MemberID: h.MemberId, Revision: h.Revision, RaftTerm: h.RaftTerm}
}

func keyValue(kv *mvccpb.KeyValue) mvcc.KeyValue {
	out := mvcc.KeyValue{Key: string(kv.Key), CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}
	if len(kv.Value) > 0 {
		out.Value = kv.Value
	}
	return out
}

func keyValues(in []*mvccpb.KeyValue) []mvcc.KeyValue {
	var out []mvcc.KeyValue
	for _, kv := range in {
		out = append(out, keyValue(kv))
	}
	return out
}

func rangeResult(p *pb.RangeResponse) *mvcc.RangeResult {
	return &mvcc.RangeResult{Header: header(p.Header), KVs: keyValues(p.Kvs), More: p.More, Count: p.Count}
}

func putResult(p *pb.PutResponse) *mvcc.PutResult {
	out := &mvcc.PutResult{Header: header(p.Header)}
	if p.PrevKv != nil {
		kv := keyValue(p.PrevKv)
		out.PrevKV = &kv
	}
	return out
}

func deleteResult(p *pb.DeleteRangeResponse) *mvcc.DeleteResult {
	return &mvcc.DeleteResult{Header: header(p.Header), Deleted: p.Deleted, PrevKVs: keyValues(p.PrevKvs)}
}

func randTxnResponse(r *rand.Rand) (*pb.TxnResponse, *mvcc.TxnResult) {
	p := &pb.TxnResponse{Header: randHeader(r), Succeeded: r.IntN(2) == 0}
	want := &mvcc.TxnResult{Header: header(p.Header), Succeeded: p.Succeeded}
	for range r.IntN(4) {
		switch r.IntN(3) {
		case 0:
			rr := &pb.RangeResponse{Header: randHeader(r), Kvs: randPBKVs(r), More: r.IntN(2) == 0, Count: randInt(r)}
			p.Responses = append(p.Responses, &pb.ResponseOp{Response: &pb.ResponseOp_ResponseRange{ResponseRange: rr}})
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpRange, Range: rangeResult(rr)})
		case 1:
			pr := &pb.PutResponse{Header: randHeader(r)}
			if r.IntN(2) == 0 {
				pr.PrevKv = randPBKV(r)
			}
			p.Responses = append(p.Responses, &pb.ResponseOp{Response: &pb.ResponseOp_ResponsePut{ResponsePut: pr}})
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpPut, Put: putResult(pr)})
		case 2:
			dr := &pb.DeleteRangeResponse{Header: randHeader(r), Deleted: randInt(r), PrevKvs: randPBKVs(r)}
			p.Responses = append(p.Responses, &pb.ResponseOp{Response: &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: dr}})
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpDelete, Delete: deleteResult(dr)})
		}
	}
	return p, want
}

func randWatchResponse(r *rand.Rand) (*pb.WatchResponse, *watchResponse) {
	p := &pb.WatchResponse{Header: randHeader(r), WatchId: randInt(r), Created: r.IntN(2) == 0, Canceled: r.IntN(2) == 0, CompactRevision: randInt(r), CancelReason: randKey(r), Fragment: r.IntN(2) == 0}
	for range r.IntN(4) {
		ev := &mvccpb.Event{Type: mvccpb.Event_EventType(r.IntN(2)), Kv: randPBKV(r)}
		if r.IntN(2) == 0 {
			ev.PrevKv = randPBKV(r)
		}
		p.Events = append(p.Events, ev)
	}
	return p, fromPBWatch(p)
}

// fromPBWatch is what the clientv3-based client made of p.
func fromPBWatch(p *pb.WatchResponse) *watchResponse {
	want := &watchResponse{Created: p.Created, WatchResponse: mvcc.WatchResponse{Header: header(p.Header), WatchID: p.WatchId, CompactRevision: p.CompactRevision, Canceled: p.Canceled, CancelReason: p.CancelReason}}
	for _, ev := range p.Events {
		e := mvcc.Event{Type: mvcc.EventType(ev.Type)}
		if ev.Kv != nil {
			e.KV = keyValue(ev.Kv)
		}
		if ev.PrevKv != nil {
			kv := keyValue(ev.PrevKv)
			e.PrevKV = &kv
		}
		want.Events = append(want.Events, e)
	}
	return want
}

// fromPBTxn is what the clientv3-based client made of p; false if p holds
// an operation this client never asks for (a nested txn, or none).
func fromPBTxn(p *pb.TxnResponse) (*mvcc.TxnResult, bool) {
	want := &mvcc.TxnResult{Header: header(p.Header), Succeeded: p.Succeeded}
	for _, ro := range p.Responses {
		switch {
		case ro.GetResponseRange() != nil:
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpRange, Range: rangeResult(ro.GetResponseRange())})
		case ro.GetResponsePut() != nil:
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpPut, Put: putResult(ro.GetResponsePut())})
		case ro.GetResponseDeleteRange() != nil:
			want.Responses = append(want.Responses, mvcc.OpResult{Type: mvcc.OpDelete, Delete: deleteResult(ro.GetResponseDeleteRange())})
		default:
			return nil, false
		}
	}
	return want, true
}

// TestResponsesDecodeAsEtcdsCode: responses marshalled by etcd's code
// decode to what the clientv3-based client made of them.
func TestResponsesDecodeAsEtcdsCode(t *testing.T) {
	r := rand.New(rand.NewPCG(20261124, 2))
	for i := range 2000 {
		p, want := randTxnResponse(r)
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got := &mvcc.TxnResult{}
		if err := decode(b, func(d *dec) { decodeTxnResponse(d, got) }); err != nil {
			t.Fatalf("%d: txn: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%d: txn response (-etcd +decoded):\n%s", i, diff)
		}

		wp, wwant := randWatchResponse(r)
		if b, err = wp.Marshal(); err != nil {
			t.Fatal(err)
		}
		wgot := &watchResponse{}
		if err := decode(b, func(d *dec) { decodeWatchResponse(d, wgot) }); err != nil {
			t.Fatalf("%d: watch: %v", i, err)
		}
		if diff := cmp.Diff(wwant, wgot); diff != "" {
			t.Fatalf("%d: watch response (-etcd +decoded):\n%s", i, diff)
		}
	}
}

// dropUnknown clears the unknown fields etcd's generated code keeps byte
// for byte (XXX_unrecognized) throughout v, so that marshalling gives what
// etcd itself sends.
func dropUnknown(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			dropUnknown(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			dropUnknown(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).Name == "XXX_unrecognized" {
				v.Field(i).SetBytes(nil)
				continue
			}
			if v.Type().Field(i).IsExported() {
				dropUnknown(v.Field(i))
			}
		}
	}
}

// remarshal returns what etcd sends for p, a message its code decoded:
// p marshalled again without the unknown fields it kept.
func remarshal(t *testing.T, p marshaler) []byte {
	t.Helper()
	dropUnknown(reflect.ValueOf(p))
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecodeWatchResponse: any bytes from the network decode without a
// panic; and whatever etcd's code accepts, once marshalled again by it (as
// etcd sends it), this decoder reads to the same values.
func FuzzDecodeWatchResponse(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		p, _ := randWatchResponse(r)
		b, _ := p.Marshal()
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var got watchResponse
		_ = decode(b, func(d *dec) { decodeWatchResponse(d, &got) })
		var p pb.WatchResponse
		if p.Unmarshal(b) != nil {
			return
		}
		canonical := remarshal(t, &p)
		got = watchResponse{}
		if err := decode(canonical, func(d *dec) { decodeWatchResponse(d, &got) }); err != nil {
			t.Fatalf("etcd's code sends %x, this decoder says %v", canonical, err)
		}
		if diff := cmp.Diff(fromPBWatch(&p), &got); diff != "" {
			t.Fatalf("%x (-etcd +decoded):\n%s", canonical, diff)
		}
	})
}

// FuzzDecodeTxnResponse: as FuzzDecodeWatchResponse, for a txn's answer
// (which holds every other response this client reads).
func FuzzDecodeTxnResponse(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		p, _ := randTxnResponse(r)
		b, _ := p.Marshal()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got mvcc.TxnResult
		_ = decode(b, func(d *dec) { decodeTxnResponse(d, &got) })
		var p pb.TxnResponse
		if p.Unmarshal(b) != nil {
			return
		}
		want, ok := fromPBTxn(&p)
		if !ok {
			return
		}
		canonical := remarshal(t, &p)
		got = mvcc.TxnResult{}
		if err := decode(canonical, func(d *dec) { decodeTxnResponse(d, &got) }); err != nil {
			t.Fatalf("etcd's code sends %x, this decoder says %v", canonical, err)
		}
		if diff := cmp.Diff(want, &got); diff != "" {
			t.Fatalf("%x (-etcd +decoded):\n%s", canonical, diff)
		}
	})
}
