package etcdprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/etcdplay"
	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Format is an etcdctl -w value.
type Format string

// The supported output formats.
const (
	Simple Format = "simple"
	JSON   Format = "json"
)

// Formats lists the supported formats.
func Formats() []Format { return []Format{Simple, JSON} }

// Printer writes results to Out and etcdctl's diagnostics to ErrOut.
type Printer struct {
	// Format is the default format; a command's own -w (Command.WriteOut,
	// checked with ParseFormat) overrides it for its results.
	Format Format
	Out    io.Writer
	ErrOut io.Writer
}

// Print renders one result.
func (p *Printer) Print(r etcdplay.Result) error {
	if r.Compact != nil {
		// etcdctl prints this line whatever -w says.
		_, err := fmt.Fprintf(p.Out, "compacted revision %d\n", r.Command.Rev)
		return err
	}
	if r.Watch != nil {
		// etcdctl's printWatchCh: the cancellation to stderr and progress
		// to stdout first, then the response in the chosen format.
		for _, wr := range r.Watch {
			if wr.Canceled {
				p.printCanceled(wr)
			}
			if wr.IsProgressNotify() {
				fmt.Fprintf(p.Out, "progress notify: %d\n", wr.Header.Revision)
			}
			one := etcdplay.Result{Command: r.Command, Watch: []mvcc.WatchResponse{wr}}
			var err error
			if p.formatOf(r) == JSON {
				err = p.printJSON(one)
			} else {
				err = p.printSimple(one)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if p.formatOf(r) == JSON {
		return p.printJSON(r)
	}
	return p.printSimple(r)
}

// formatOf is the format of r: its command's -w, else the default.
func (p *Printer) formatOf(r etcdplay.Result) Format {
	if r.Command != nil && r.Command.WriteOut != "" {
		return Format(r.Command.WriteOut)
	}
	return p.Format
}

// ErrorText returns the message etcdctl prints after "Error: " for an etcd
// error: the gRPC text, which prefixes the mvcc errors with "etcdserver: ".
func ErrorText(err error) string {
	switch {
	case errors.Is(err, mvcc.ErrCompacted), errors.Is(err, mvcc.ErrFutureRev):
		var inner error = mvcc.ErrCompacted
		if errors.Is(err, mvcc.ErrFutureRev) {
			inner = mvcc.ErrFutureRev
		}
		return "etcdserver: " + inner.Error()
	}
	var ce *etcdplay.CommandError
	if errors.As(err, &ce) {
		return ce.Err.Error()
	}
	return err.Error()
}

// PrintError writes etcdctl's "Error: ..." line to ErrOut.
func (p *Printer) PrintError(err error) {
	fmt.Fprintf(p.ErrOut, "Error: %s\n", text.Escape(ErrorText(err)))
}

// printKV prints a key line and a value line, as etcdctl does, but with
// terminal control sequences escaped (JSON output carries the exact bytes).
func printKV(w io.Writer, kv *mvcc.KeyValue) {
	fmt.Fprintln(w, text.Escape(kv.Key))
	fmt.Fprintln(w, text.Escape(string(kv.Value)))
}

func (p *Printer) printSimple(r etcdplay.Result) error {
	w := p.Out
	switch {
	case r.Range != nil:
		simpleGet(w, r.Range)
	case r.Put != nil:
		simplePut(w, r.Put)
	case r.Delete != nil:
		simpleDel(w, r.Delete)
	case r.Txn != nil:
		if r.Txn.Succeeded {
			fmt.Fprintln(w, "SUCCESS")
		} else {
			fmt.Fprintln(w, "FAILURE")
		}
		for _, op := range r.Txn.Responses {
			fmt.Fprintln(w)
			switch {
			case op.Delete != nil:
				simpleDel(w, op.Delete)
			case op.Put != nil:
				simplePut(w, op.Put)
			case op.Range != nil:
				simpleGet(w, op.Range)
			}
		}
	case r.Watch != nil:
		for _, wr := range r.Watch {
			for i := range wr.Events {
				ev := &wr.Events[i]
				if ev.Type == mvcc.EventDelete {
					fmt.Fprintln(w, "DELETE")
				} else {
					fmt.Fprintln(w, "PUT")
				}
				if ev.PrevKV != nil {
					printKV(w, ev.PrevKV)
				}
				printKV(w, &ev.KV)
			}
		}
	}
	return nil
}

func (p *Printer) printCanceled(wr mvcc.WatchResponse) {
	reason := wr.CancelReason
	if wr.CompactRevision != 0 {
		reason = ErrorText(mvcc.ErrCompacted)
	}
	fmt.Fprintf(p.ErrOut, "watch was canceled (%s)\n", reason)
}

func simpleGet(w io.Writer, r *mvcc.RangeResult) {
	for i := range r.KVs {
		printKV(w, &r.KVs[i])
	}
}

func simplePut(w io.Writer, r *mvcc.PutResult) {
	fmt.Fprintln(w, "OK")
	if r.PrevKV != nil {
		printKV(w, r.PrevKV)
	}
}

func simpleDel(w io.Writer, r *mvcc.DeleteResult) {
	fmt.Fprintln(w, r.Deleted)
	for i := range r.PrevKVs {
		printKV(w, &r.PrevKVs[i])
	}
}

// The JSON shapes: field names and omitempty as in etcd's generated
// protobuf structs, which etcdctl marshals with encoding/json.
type jsonHeader struct {
	ClusterID uint64 `json:"cluster_id,omitempty"`
	MemberID  uint64 `json:"member_id,omitempty"`
	Revision  int64  `json:"revision,omitempty"`
	RaftTerm  uint64 `json:"raft_term,omitempty"`
}

type jsonKV struct {
	Key            []byte `json:"key,omitempty"`
	CreateRevision int64  `json:"create_revision,omitempty"`
	ModRevision    int64  `json:"mod_revision,omitempty"`
	Version        int64  `json:"version,omitempty"`
	Value          []byte `json:"value,omitempty"`
	Lease          int64  `json:"lease,omitempty"`
}

type jsonRange struct {
	Header *jsonHeader `json:"header,omitempty"`
	Kvs    []*jsonKV   `json:"kvs,omitempty"`
	More   bool        `json:"more,omitempty"`
	Count  int64       `json:"count,omitempty"`
}

type jsonPut struct {
	Header *jsonHeader `json:"header,omitempty"`
	PrevKv *jsonKV     `json:"prev_kv,omitempty"`
}

type jsonDel struct {
	Header  *jsonHeader `json:"header,omitempty"`
	Deleted int64       `json:"deleted,omitempty"`
	PrevKvs []*jsonKV   `json:"prev_kvs,omitempty"`
}

type jsonTxn struct {
	Header    *jsonHeader       `json:"header,omitempty"`
	Succeeded bool              `json:"succeeded,omitempty"`
	Responses []*jsonResponseOp `json:"responses,omitempty"`
}

// jsonResponseOp is the gRPC oneof wrapper: its interface field has no
// json tag, hence "Response".
type jsonResponseOp struct {
	Response any
}

type jsonResponseRange struct {
	ResponseRange *jsonRange `json:"response_range,omitempty"`
}

type jsonResponsePut struct {
	ResponsePut *jsonPut `json:"response_put,omitempty"`
}

type jsonResponseDel struct {
	ResponseDeleteRange *jsonDel `json:"response_delete_range,omitempty"`
}

type jsonEvent struct {
	Type   int32   `json:"type,omitempty"`
	Kv     *jsonKV `json:"kv,omitempty"`
	PrevKv *jsonKV `json:"prev_kv,omitempty"`
}

// jsonWatch is clientv3.WatchResponse, whose fields have no json tags.
type jsonWatch struct {
	Header          jsonHeader
	Events          []*jsonEvent
	CompactRevision int64
	Canceled        bool
	Created         bool
}

func header(h mvcc.Header) *jsonHeader {
	return &jsonHeader{ClusterID: h.ClusterID, MemberID: h.MemberID, Revision: h.Revision, RaftTerm: h.RaftTerm}
}

func kv(in *mvcc.KeyValue) *jsonKV {
	if in == nil {
		return nil
	}
	return &jsonKV{Key: []byte(in.Key), CreateRevision: in.CreateRevision, ModRevision: in.ModRevision, Version: in.Version, Value: in.Value, Lease: in.Lease}
}

func kvs(in []mvcc.KeyValue) []*jsonKV {
	if len(in) == 0 {
		return nil
	}
	out := make([]*jsonKV, len(in))
	for i := range in {
		out[i] = kv(&in[i])
	}
	return out
}

func rangeJSON(r *mvcc.RangeResult) *jsonRange {
	return &jsonRange{Header: header(r.Header), Kvs: kvs(r.KVs), More: r.More, Count: r.Count}
}

func putJSON(r *mvcc.PutResult) *jsonPut {
	return &jsonPut{Header: header(r.Header), PrevKv: kv(r.PrevKV)}
}

func delJSON(r *mvcc.DeleteResult) *jsonDel {
	return &jsonDel{Header: header(r.Header), Deleted: r.Deleted, PrevKvs: kvs(r.PrevKVs)}
}

// Shape returns the value etcdctl would marshal for r, one per output
// line (a watch result gives one per response).
func Shape(r etcdplay.Result) []any {
	switch {
	case r.Range != nil:
		return []any{rangeJSON(r.Range)}
	case r.Put != nil:
		return []any{putJSON(r.Put)}
	case r.Delete != nil:
		return []any{delJSON(r.Delete)}
	case r.Txn != nil:
		t := &jsonTxn{Header: header(r.Txn.Header), Succeeded: r.Txn.Succeeded}
		for _, op := range r.Txn.Responses {
			switch {
			case op.Range != nil:
				t.Responses = append(t.Responses, &jsonResponseOp{Response: jsonResponseRange{rangeJSON(op.Range)}})
			case op.Put != nil:
				t.Responses = append(t.Responses, &jsonResponseOp{Response: jsonResponsePut{putJSON(op.Put)}})
			case op.Delete != nil:
				t.Responses = append(t.Responses, &jsonResponseOp{Response: jsonResponseDel{delJSON(op.Delete)}})
			}
		}
		return []any{t}
	case r.Watch != nil:
		var out []any
		for _, wr := range r.Watch {
			// clientv3 always allocates Events, so an empty one is [].
			jw := jsonWatch{Header: *header(wr.Header), Events: make([]*jsonEvent, 0, len(wr.Events)), CompactRevision: wr.CompactRevision, Canceled: wr.Canceled}
			for i := range wr.Events {
				ev := &wr.Events[i]
				jw.Events = append(jw.Events, &jsonEvent{Type: int32(ev.Type), Kv: kv(&ev.KV), PrevKv: kv(ev.PrevKV)})
			}
			out = append(out, jw)
		}
		return out
	}
	return nil
}

func (p *Printer) printJSON(r etcdplay.Result) error {
	for _, v := range Shape(r) {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding the etcd response: %w", err)
		}
		if _, err := fmt.Fprintln(p.Out, string(b)); err != nil {
			return err
		}
	}
	return nil
}

// ParseFormat checks a -w value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, 0, 2)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("--write-out must be one of %s, got %q", strings.Join(names, ", "), s)
}
