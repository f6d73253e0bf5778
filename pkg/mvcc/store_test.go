package mvcc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kvs renders key-value pairs compactly for diffs.
func kvs(in []KeyValue) []string {
	out := make([]string, 0, len(in))
	for _, kv := range in {
		out = append(out, fmt.Sprintf("%s=%s c%d m%d v%d", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version))
	}
	return out
}

func mustPut(t *testing.T, s *Store, k, v string) int64 {
	t.Helper()
	r, err := s.Put(context.Background(), k, []byte(v), PutOptions{})
	if err != nil {
		t.Fatalf("put %s: %v", k, err)
	}
	return r.Header.Revision
}

func mustGet(t *testing.T, s *Store, k string, opts RangeOptions) *RangeResult {
	t.Helper()
	r, err := s.Range(context.Background(), k, opts)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return r
}

// TestSeedTranscript is REFERENCE.md section 1's transcript.
func TestSeedTranscript(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	for i := range 4 {
		mustPut(t, s, fmt.Sprintf("other%d", i), "x")
	}
	steps := []struct {
		name string
		do   func() (int64, []string)
		rev  int64
		want []string
	}{
		{"put k1", func() (int64, []string) {
			mustPut(t, s, "k1", "a")
			r := mustGet(t, s, "k1", RangeOptions{})
			return r.Header.Revision, kvs(r.KVs)
		}, 6, []string{"k1=a c6 m6 v1"}},
		{"put k2", func() (int64, []string) { return mustPut(t, s, "k2", "b"), nil }, 7, nil},
		{"put k1 again", func() (int64, []string) {
			mustPut(t, s, "k1", "c")
			r := mustGet(t, s, "k1", RangeOptions{})
			return r.Header.Revision, kvs(r.KVs)
		}, 8, []string{"k1=c c6 m8 v2"}},
		{"del k1", func() (int64, []string) {
			r, err := s.DeleteRange(ctx, "k1", DeleteOptions{})
			if err != nil || r.Deleted != 1 {
				t.Fatalf("del: %v %+v", err, r)
			}
			return r.Header.Revision, nil
		}, 9, nil},
		{"get k1 --rev=6", func() (int64, []string) {
			r := mustGet(t, s, "k1", RangeOptions{Rev: 6})
			return r.Header.Revision, kvs(r.KVs)
		}, 9, []string{"k1=a c6 m6 v1"}},
		{"get k1 after delete", func() (int64, []string) {
			r := mustGet(t, s, "k1", RangeOptions{})
			return r.Header.Revision, kvs(r.KVs)
		}, 9, []string{}},
		{"del k1 again consumes nothing", func() (int64, []string) {
			r, _ := s.DeleteRange(ctx, "k1", DeleteOptions{})
			return r.Header.Revision, nil
		}, 9, nil},
		{"recreate k1", func() (int64, []string) {
			mustPut(t, s, "k1", "d")
			r := mustGet(t, s, "k1", RangeOptions{})
			return r.Header.Revision, kvs(r.KVs)
		}, 10, []string{"k1=d c10 m10 v1"}},
	}
	for _, st := range steps {
		rev, got := st.do()
		if rev != st.rev {
			t.Errorf("%s: revision %d, want %d", st.name, rev, st.rev)
		}
		if st.want != nil {
			if d := cmp.Diff(st.want, got); d != "" {
				t.Errorf("%s: (-want +got)\n%s", st.name, d)
			}
		}
	}
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	for i := range 5 {
		mustPut(t, s, "k", fmt.Sprint(i)) // revs 2..6
	}
	if _, err := s.Compact(ctx, 7); !errors.Is(err, ErrFutureRev) {
		t.Errorf("compact 7: %v, want ErrFutureRev", err)
	}
	if _, err := s.Compact(ctx, 4); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rev     int64
		wantErr error
		want    []string
	}{
		{3, ErrCompacted, nil},
		{4, nil, []string{"k=2 c2 m4 v3"}},
		{6, nil, []string{"k=4 c2 m6 v5"}},
		{7, ErrFutureRev, nil},
	}
	for _, tt := range tests {
		r, err := s.Range(ctx, "k", RangeOptions{Rev: tt.rev})
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("rev %d: error %v, want %v", tt.rev, err, tt.wantErr)
			continue
		}
		if err == nil {
			if d := cmp.Diff(tt.want, kvs(r.KVs)); d != "" {
				t.Errorf("rev %d: (-want +got)\n%s", tt.rev, d)
			}
		}
	}
	if _, err := s.Compact(ctx, 4); !errors.Is(err, ErrCompacted) {
		t.Errorf("compact 4 twice: %v, want ErrCompacted", err)
	}
	if got := ErrCompacted.Error(); got != "mvcc: required revision has been compacted" {
		t.Errorf("message %q", got)
	}
}

func TestTxn(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	mustPut(t, s, "a", "1") // 2
	tests := []struct {
		name      string
		txn       Txn
		wantErr   error
		succeeded bool
		rev       int64
	}{
		{"create guard fails on existing key", Txn{Compare: []Compare{ModRevision("a", Equal, 0)}, Success: []Op{OpPutKV("a", []byte("x"), PutOptions{})}}, nil, false, 2},
		{"update guard", Txn{Compare: []Compare{ModRevision("a", Equal, 2)}, Success: []Op{OpPutKV("a", []byte("2"), PutOptions{}), OpPutKV("b", []byte("1"), PutOptions{})}}, nil, true, 3},
		{"version greater", Txn{Compare: []Compare{Version("a", Greater, 1)}, Success: []Op{OpDel("b", DeleteOptions{})}}, nil, true, 4},
		{"value compare on missing key fails", Txn{Compare: []Compare{Value("zz", NotEqual, []byte("q"))}, Failure: []Op{OpGet("a", RangeOptions{})}}, nil, false, 4},
		{"duplicate put", Txn{Success: []Op{OpPutKV("a", nil, PutOptions{}), OpPutKV("a", nil, PutOptions{})}}, ErrDuplicateKey, false, 0},
		{"put inside delete range", Txn{Success: []Op{OpDel("a", DeleteOptions{End: "c"}), OpPutKV("b", nil, PutOptions{})}}, ErrDuplicateKey, false, 0},
		{"future range", Txn{Success: []Op{OpGet("a", RangeOptions{Rev: 99})}}, ErrFutureRev, false, 0},
		{"empty key", Txn{Compare: []Compare{ModRevision("", Equal, 0)}}, ErrEmptyKey, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.Txn(ctx, tt.txn)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if r.Succeeded != tt.succeeded || r.Header.Revision != tt.rev {
				t.Errorf("succeeded %v rev %d, want %v %d", r.Succeeded, r.Header.Revision, tt.succeeded, tt.rev)
			}
		})
	}
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	mustPut(t, s, "a", "1")                                             // 2
	mustPut(t, s, "a", "2")                                             // 3
	if _, err := s.DeleteRange(ctx, "a", DeleteOptions{}); err != nil { // 4
		t.Fatal(err)
	}
	w, _ := s.Watch(ctx, "a", WatchOptions{Rev: 2, PrevKV: true})
	mustPut(t, s, "a", "3") // 5
	mustPut(t, s, "b", "x") // 6, not watched
	var got []string
	for _, r := range w.Drain() {
		for _, ev := range r.Events {
			p := ""
			if ev.PrevKV != nil {
				p = " prev=" + string(ev.PrevKV.Value)
			}
			got = append(got, fmt.Sprintf("%d %s m%d%s", ev.Type, ev.KV.Value, ev.KV.ModRevision, p))
		}
	}
	want := []string{"0 1 m2", "0 2 m3 prev=1", "1  m4 prev=2", "0 3 m5"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got)\n%s", d)
	}
	if _, err := s.Compact(ctx, 5); err != nil {
		t.Fatal(err)
	}
	old, _ := s.Watch(ctx, "a", WatchOptions{Rev: 3})
	rs := old.Drain()
	if len(rs) != 1 || !rs[0].Canceled || rs[0].CompactRevision != 5 {
		t.Errorf("watch from compacted revision: %+v", rs)
	}
	if err := s.RequestProgress(ctx); err != nil {
		t.Fatal(err)
	}
	rs = w.Drain()
	if len(rs) != 1 || !rs[0].IsProgressNotify() || rs[0].Header.Revision != 6 {
		t.Errorf("progress: %+v", rs)
	}
}

// TestEtcdRecreateInOneTxnThenCompact is the history that crashes etcd
// v3.6.8 (found by the conformance test):
//
//	etcdctl put a/11 x
//	printf '\ndel a --from-key\nput a/11 y\n\n\n' | etcdctl txn   # allowed: etcd reads the "\x00" end literally
//	etcdctl compact 3
//	etcdctl get a/11     # etcd exits: "range failed to find revision pair"
//
// etcd's index compaction keeps one generation per main revision, so the
// backend loses the recreated value while the index still points at it.
// The embedded store answers what etcd's data model says: the recreated key.
func TestEtcdRecreateInOneTxnThenCompact(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	mustPut(t, s, "a/11", "x")
	r, err := s.Txn(ctx, Txn{Success: []Op{OpDel("a", DeleteOptions{End: "\x00"}), OpPutKV("a/11", []byte("y"), PutOptions{})}})
	if err != nil || !r.Succeeded || r.Header.Revision != 3 {
		t.Fatalf("txn: %v %+v", err, r)
	}
	if _, err := s.Compact(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got := kvs(mustGet(t, s, "a/11", RangeOptions{}).KVs)
	if d := cmp.Diff([]string{"a/11=y c3 m3 v1"}, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

// TestValuesSurviveCompaction writes small and chunk-sized values, compacts
// repeatedly (freeing chunks), and checks every live value against a map.
func TestValuesSurviveCompaction(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	model := map[string]string{}
	for i := range 20000 {
		k := fmt.Sprintf("k%03d", i%300)
		v := fmt.Sprintf("%d-%s", i, strings.Repeat("x", i%97))
		if i%1000 == 7 {
			v += strings.Repeat("L", valueChunk/2) // a chunk of its own
		}
		if i%13 == 0 {
			if _, err := s.DeleteRange(ctx, k, DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			delete(model, k)
		} else {
			mustPut(t, s, k, v)
			model[k] = v
		}
		if i%2500 == 2499 {
			cur, _, _ := s.Rev(ctx)
			if _, err := s.Compact(ctx, cur-100); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := mustGet(t, s, "k", RangeOptions{End: "l"})
	got := map[string]string{}
	for _, kv := range r.KVs {
		got[kv.Key] = string(kv.Value)
	}
	if d := cmp.Diff(model, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	freed := 0
	for _, c := range s.chunks {
		if c == nil {
			freed++
		}
	}
	if freed == 0 {
		t.Errorf("compaction freed none of %d chunks", len(s.chunks))
	}
}

// TestNotifyProgress is etcd's periodic progress notification: on a tick, a
// watch that asked for it and got no events since the previous tick gets
// one at the current revision; a watch waiting for a future revision gets
// none.
func TestNotifyProgress(t *testing.T) {
	ctx := context.Background()
	s := NewDefault()
	quiet, _ := s.Watch(ctx, "q", WatchOptions{ProgressNotify: true})
	busy, _ := s.Watch(ctx, "b", WatchOptions{ProgressNotify: true})
	future, _ := s.Watch(ctx, "q", WatchOptions{Rev: 50, ProgressNotify: true})
	plain, _ := s.Watch(ctx, "q", WatchOptions{})
	mustPut(t, s, "b", "1") // rev 2
	s.NotifyProgress()
	summary := func(w Watcher) []string {
		var out []string
		for _, r := range w.Drain() {
			out = append(out, fmt.Sprintf("rev %d events %d progress %v", r.Header.Revision, len(r.Events), r.IsProgressNotify()))
		}
		return out
	}
	if d := cmp.Diff([]string{"rev 2 events 0 progress true"}, summary(quiet)); d != "" {
		t.Errorf("quiet (-want +got)\n%s", d)
	}
	if d := cmp.Diff([]string{"rev 2 events 1 progress false"}, summary(busy)); d != "" {
		t.Errorf("busy (-want +got)\n%s", d)
	}
	if got := summary(future); got != nil {
		t.Errorf("future: %v", got)
	}
	if got := summary(plain); got != nil {
		t.Errorf("plain: %v", got)
	}
	s.NotifyProgress() // busy had no events since the last tick now
	if d := cmp.Diff([]string{"rev 2 events 0 progress true"}, summary(busy)); d != "" {
		t.Errorf("busy, second tick (-want +got)\n%s", d)
	}
}
