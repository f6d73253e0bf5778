package etcdprint

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/etcdplay"
	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{mvcc.ErrCompacted, "etcdserver: mvcc: required revision has been compacted"},
		{fmt.Errorf("get: %w", mvcc.ErrFutureRev), "etcdserver: mvcc: required revision is a future revision"},
		{&etcdplay.CommandError{Command: &etcdplay.Command{Kind: etcdplay.Txn}, Err: mvcc.ErrDuplicateKey}, "etcdserver: duplicate key given in txn request"},
	}
	for _, tt := range tests {
		if got := ErrorText(tt.err); got != tt.want {
			t.Errorf("ErrorText(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestSimpleEscapes checks that keys and values cannot drive the terminal.
func TestSimpleEscapes(t *testing.T) {
	var out bytes.Buffer
	p := &Printer{Format: Simple, Out: &out, ErrOut: &out}
	r := &mvcc.RangeResult{KVs: []mvcc.KeyValue{{Key: "k\x1b[31m", Value: []byte("v\x1b]0;x\x07")}}}
	if err := p.Print(etcdplay.Result{Range: r}); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(out.Bytes(), 0x1b) {
		t.Errorf("escape sequence printed: %q", out.String())
	}
	var js bytes.Buffer
	p = &Printer{Format: JSON, Out: &js, ErrOut: &js}
	if err := p.Print(etcdplay.Result{Range: r}); err != nil {
		t.Fatal(err)
	}
	want := `{"header":{},"kvs":[{"key":"axtbMzFt","value":"dhtdMDt4Bw=="}]}` + "\n"
	if d := cmp.Diff(want, js.String()); d != "" {
		t.Errorf("json keeps the exact bytes (-want +got)\n%s", d)
	}
}
