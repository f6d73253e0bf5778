package mvcc

import (
	"context"
	"slices"
	"sync"

	"github.com/google/btree"
)

// Store is the embedded revision store. It implements WatchKV with etcd's
// semantics, deterministically: no goroutines, no clock. It is safe for
// concurrent use, but a simulator normally drives it from one goroutine.
//
// Values passed to Put are copied; values returned in results share the
// store's memory and must not be modified.
type Store struct {
	cfg Config

	// mu guards every field below, and the queues of the store's watchers.
	mu sync.Mutex
	// current is the revision of the last write txn (1 for an empty store).
	current int64
	// compactMain is the last compaction revision; -1 before the first one,
	// as in etcd, so Compact(0) on a fresh store succeeds once.
	compactMain int64
	// keys finds a key's history by name; tree orders the same histories for
	// ranges.
	keys map[string]*keyIndex
	tree *btree.BTreeG[*keyIndex]
	// chunks hold the values: small ones packed into shared chunks (one
	// allocation per many values, and no pointers in the histories), large
	// ones alone. live counts the records using each chunk; compaction
	// frees a chunk whose count drops to zero. cur is the chunk being
	// filled, -1 if none.
	chunks [][]byte
	live   []int32
	cur    int
	// watchers are the open watchers in creation order.
	watchers    []*watcher
	nextWatchID int64
	closed      bool
}

var _ WatchKV = (*Store)(nil)

// New returns an empty store at revision 1.
func New(cfg Config) *Store {
	d := DefaultConfig()
	if cfg.MaxTxnOps <= 0 {
		cfg.MaxTxnOps = d.MaxTxnOps
	}
	if cfg.WatchBatchMaxRevs <= 0 {
		cfg.WatchBatchMaxRevs = d.WatchBatchMaxRevs
	}
	return &Store{
		cfg:         cfg,
		current:     1,
		compactMain: -1,
		keys:        make(map[string]*keyIndex),
		cur:         -1,
		tree:        btree.NewG(32, func(a, b *keyIndex) bool { return a.key < b.key }),
	}
}

// NewDefault returns an empty store with DefaultConfig.
func NewDefault() *Store { return New(DefaultConfig()) }

// header returns a full response header at rev.
func (s *Store) header(rev int64) Header {
	return Header{ClusterID: s.cfg.ClusterID, MemberID: s.cfg.MemberID, Revision: rev, RaftTerm: s.cfg.RaftTerm}
}

// Rev returns the current and the compacted revision (0 before the first
// compaction).
func (s *Store) Rev(context.Context) (current, compacted int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current, max(s.compactMain, 0), nil
}

// Range reads key (or [key, opts.End)) at opts.Rev.
func (s *Store) Range(_ context.Context, key string, opts RangeOptions) (*RangeResult, error) {
	if key == "" {
		return nil, ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.unsafeRange(key, opts, s.current)
	if err != nil {
		return nil, err
	}
	r.Header = s.header(s.current)
	return r, nil
}

// Put writes key in a txn of its own.
func (s *Store) Put(_ context.Context, key string, value []byte, opts PutOptions) (*PutResult, error) {
	if key == "" {
		return nil, ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := s.unsafeBegin()
	r := s.unsafePut(&tw, key, value, opts)
	s.unsafeEnd(&tw)
	r.Header = s.header(s.current)
	return r, nil
}

// DeleteRange deletes key (or [key, opts.End)) in a txn of its own.
func (s *Store) DeleteRange(_ context.Context, key string, opts DeleteOptions) (*DeleteResult, error) {
	if key == "" {
		return nil, ErrEmptyKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tw := s.unsafeBegin()
	r := s.unsafeDelete(&tw, key, opts)
	s.unsafeEnd(&tw)
	r.Header = s.header(s.current)
	return r, nil
}

// Compact discards the history below rev. It fails with ErrCompacted when
// rev is at or below the previous compaction and with ErrFutureRev when rev
// is above the current revision. Watchers are not affected: the embedded
// store delivers events as they happen, so none lags behind.
func (s *Store) Compact(_ context.Context, rev int64) (*CompactResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev <= s.compactMain {
		return nil, ErrCompacted
	}
	if rev > s.current {
		return nil, ErrFutureRev
	}
	s.compactMain = rev
	var empty []*keyIndex
	s.tree.Ascend(func(ki *keyIndex) bool {
		if ki.compact(rev, s.unsafeRelease) {
			empty = append(empty, ki)
		}
		return true
	})
	for _, ki := range empty {
		s.tree.Delete(ki)
		delete(s.keys, ki.key)
	}
	return &CompactResult{Header: s.header(s.current)}, nil
}

// Close releases the store; open watchers are closed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.closed = true
	}
	s.watchers = nil
	s.closed = true
	return nil
}

// Len returns the number of live keys at the current revision.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ki := range s.keys {
		if _, ok := ki.latest(); ok {
			n++
		}
	}
	return n
}

// unsafeRange reads at opts.Rev with cur as the current revision of the
// reader (inside a write txn that already changed something, cur is the
// txn's revision). The header is left to the caller.
func (s *Store) unsafeRange(key string, opts RangeOptions, cur int64) (*RangeResult, error) {
	rev := opts.Rev
	if rev > cur {
		return nil, ErrFutureRev
	}
	if rev <= 0 {
		rev = cur
	}
	if rev < s.compactMain {
		return nil, ErrCompacted
	}
	if opts.End == "" {
		if ki, ok := s.keys[key]; ok {
			if r, ok := ki.at(rev); ok {
				if opts.CountOnly {
					return &RangeResult{Count: 1}, nil
				}
				// One allocation for the result and its only pair.
				one := &struct {
					res RangeResult
					kv  [1]KeyValue
				}{}
				one.kv[0] = s.kvOf(ki, r, opts.KeysOnly)
				one.res.KVs, one.res.Count = one.kv[:], 1
				return &one.res, nil
			}
		}
		return &RangeResult{}, nil
	}
	res := &RangeResult{}
	limit := opts.Limit
	s.unsafeAscend(key, opts.End, func(ki *keyIndex) {
		r, ok := ki.at(rev)
		if !ok {
			return
		}
		res.Count++
		if opts.CountOnly {
			return
		}
		if limit > 0 && int64(len(res.KVs)) >= limit {
			res.More = true
			return
		}
		res.KVs = append(res.KVs, s.kvOf(ki, r, opts.KeysOnly))
	})
	return res, nil
}

// unsafeAscend visits the key histories in [key, end) in key order; end
// "\x00" means every key >= key, end "" only key.
func (s *Store) unsafeAscend(key, end string, f func(*keyIndex)) {
	switch {
	case end == "":
		if ki, ok := s.keys[key]; ok {
			f(ki)
		}
	case end == "\x00":
		s.tree.AscendGreaterOrEqual(&keyIndex{key: key}, func(ki *keyIndex) bool { f(ki); return true })
	case end > key:
		s.tree.AscendRange(&keyIndex{key: key}, &keyIndex{key: end}, func(ki *keyIndex) bool { f(ki); return true })
	}
}

// inRange reports whether k is in [key, end) with etcd's end conventions.
func inRange(k, key, end string) bool {
	switch end {
	case "":
		return k == key
	case "\x00":
		return k >= key
	default:
		return k >= key && k < end
	}
}

// writeTxn is a write transaction in progress. Its changes are applied to
// the index at once, numbered by Sub; the revision is bumped at the end if
// anything changed.
type writeTxn struct {
	begin   int64
	changes int64
	events  []Event
}

// rev is the revision a read inside the txn sees as current.
func (tw *writeTxn) rev() int64 {
	if tw.changes > 0 {
		return tw.begin + 1
	}
	return tw.begin
}

func (s *Store) unsafeBegin() writeTxn { return writeTxn{begin: s.current} }

func (s *Store) unsafePut(tw *writeTxn, key string, value []byte, opts PutOptions) *PutResult {
	res := &PutResult{}
	main := tw.begin + 1
	ki, ok := s.keys[key]
	if !ok {
		ki = &keyIndex{key: key}
		s.keys[key] = ki
		s.tree.ReplaceOrInsert(ki)
	}
	rec := record{main: main, sub: int32(tw.changes), create: main, version: 1}
	if len(value) > 0 {
		rec.chunk, rec.off, rec.n = s.unsafeStoreValue(value)
	}
	if last, ok := ki.latest(); ok {
		rec.create = last.create
		rec.version = last.version + 1
		if opts.PrevKV {
			kv := s.kvOf(ki, last, false)
			res.PrevKV = &kv
		}
	}
	ki.hist = append(ki.hist, rec)
	tw.changes++
	if len(s.watchers) > 0 {
		tw.events = append(tw.events, s.unsafeEvent(ki, len(ki.hist)-1, true))
	}
	res.Header = Header{Revision: main}
	return res
}

func (s *Store) unsafeDelete(tw *writeTxn, key string, opts DeleteOptions) *DeleteResult {
	res := &DeleteResult{}
	rrev := tw.rev()
	var victims []*keyIndex
	s.unsafeAscend(key, opts.End, func(ki *keyIndex) {
		if _, ok := ki.at(rrev); ok {
			victims = append(victims, ki)
		}
	})
	main := tw.begin + 1
	for _, ki := range victims {
		if opts.PrevKV {
			last, _ := ki.latest()
			res.PrevKVs = append(res.PrevKVs, s.kvOf(ki, last, false))
		}
		ki.hist = append(ki.hist, record{main: main, sub: int32(tw.changes), tombstone: true})
		tw.changes++
		if len(s.watchers) > 0 {
			tw.events = append(tw.events, s.unsafeEvent(ki, len(ki.hist)-1, true))
		}
	}
	res.Deleted = int64(len(victims))
	if res.Deleted != 0 || tw.changes > 0 {
		res.Header = Header{Revision: main}
	} else {
		res.Header = Header{Revision: tw.begin}
	}
	return res
}

// valueChunk is the size of the chunks values are copied into. Values
// larger than a quarter chunk get a chunk of their own.
const valueChunk = 64 << 10

// unsafeStoreValue copies v into a chunk and returns where it is.
func (s *Store) unsafeStoreValue(v []byte) (chunk, off, n uint32) {
	if len(v) > valueChunk/4 {
		s.chunks = append(s.chunks, slices.Clone(v))
		s.live = append(s.live, 1)
		return uint32(len(s.chunks) - 1), 0, uint32(len(v))
	}
	if s.cur < 0 || cap(s.chunks[s.cur])-len(s.chunks[s.cur]) < len(v) {
		if s.cur >= 0 && s.live[s.cur] == 0 {
			s.chunks[s.cur] = nil
		}
		s.chunks = append(s.chunks, make([]byte, 0, valueChunk))
		s.live = append(s.live, 0)
		s.cur = len(s.chunks) - 1
	}
	c := s.chunks[s.cur]
	o := len(c)
	s.chunks[s.cur] = append(c, v...)
	s.live[s.cur]++
	return uint32(s.cur), uint32(o), uint32(len(v))
}

// unsafeRelease drops a compacted record's hold on its value's chunk.
func (s *Store) unsafeRelease(r *record) {
	if r.n == 0 {
		return
	}
	s.live[r.chunk]--
	if s.live[r.chunk] == 0 && int(r.chunk) != s.cur {
		s.chunks[r.chunk] = nil
	}
}

// value returns a record's value. Its capacity is its length, so a caller
// appending to it cannot overwrite a neighbour.
func (s *Store) value(r *record) []byte {
	if r.n == 0 {
		return nil
	}
	return s.chunks[r.chunk][r.off : r.off+r.n : r.off+r.n]
}

// kvOf returns the key-value pair of a record of ki.
func (s *Store) kvOf(ki *keyIndex, r *record, keysOnly bool) KeyValue {
	kv := KeyValue{Key: ki.key, CreateRevision: r.create, ModRevision: r.main, Version: r.version}
	if !keysOnly {
		kv.Value = s.value(r)
	}
	return kv
}

// unsafeEnd commits a write txn: one revision if anything changed, and the
// events go to the watchers.
func (s *Store) unsafeEnd(tw *writeTxn) {
	if tw.changes == 0 {
		return
	}
	s.current++
	if len(tw.events) > 0 {
		s.unsafeNotify(s.current, tw.events)
	}
}
