package mvcc

import (
	"context"
	"errors"
)

// This file is the stable surface of the revision store. The embedded Store
// and the real-etcd adapter (pkg/etcdclient) both implement WatchKV,
// and pkg/simulate codes against these names only.

// The sentinel errors. Their texts are etcd's mvcc texts; the real-etcd
// adapter maps the gRPC errors ("etcdserver: " + text) back to them, so
// callers check them with errors.Is whichever engine runs.
var (
	// ErrCompacted is returned when a read, a watch or a compaction asks for a
	// revision below (or, for Compact, at or below) the compacted revision.
	ErrCompacted = errors.New("mvcc: required revision has been compacted")
	// ErrFutureRev is returned when a revision above the current one is asked for.
	ErrFutureRev = errors.New("mvcc: required revision is a future revision")
	// ErrEmptyKey is returned when a request carries no key.
	ErrEmptyKey = errors.New("etcdserver: key is not provided")
	// ErrDuplicateKey is returned when one branch of a txn writes the same key twice.
	ErrDuplicateKey = errors.New("etcdserver: duplicate key given in txn request")
	// ErrTooManyOps is returned when a txn has more operations than MaxTxnOps.
	ErrTooManyOps = errors.New("etcdserver: too many operations in txn request")
	// ErrEmptyWatcherRange is returned by Watch when the range end is at or
	// before the key.
	ErrEmptyWatcherRange = errors.New("mvcc: watcher range is empty")
)

// MaxTxnOps is etcd's default --max-txn-ops: the most compares or operations
// in one branch of a txn.
const MaxTxnOps = 128

// Header is the response header of every call. Revision is the store's
// current revision when the call completed, even for a read at a past
// revision.
type Header struct {
	ClusterID uint64
	MemberID  uint64
	Revision  int64
	RaftTerm  uint64
}

// KeyValue is one key at one revision.
//
// CreateRevision is the revision of the put that created the key's current
// generation, ModRevision the revision of its last write, Version the number
// of writes since creation (1 after the creating put). Example: put k1 at 6,
// put k1 at 8, delete at 9, put at 10 gives (create 6, mod 6, ver 1),
// (6, 8, 2), then (10, 10, 1).
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64
	ModRevision    int64
	Version        int64
	Lease          int64
}

// RangeOptions select the keys of a Range and shape its answer.
type RangeOptions struct {
	// End is the exclusive end of the key range: "" reads only Key; "\x00"
	// reads every key >= Key; PrefixEnd(Key) reads the prefix Key.
	End string
	// Rev is the revision to read at; <= 0 means the current revision.
	Rev int64
	// Limit caps the number of keys returned (0 = no limit); Count and More
	// still describe the whole range.
	Limit int64
	// KeysOnly leaves Value empty.
	KeysOnly bool
	// CountOnly returns only Count.
	CountOnly bool
}

// RangeResult is the answer of a Range.
type RangeResult struct {
	Header Header
	KVs    []KeyValue
	// More reports that Limit cut the answer short.
	More bool
	// Count is the number of keys in the range at Rev, ignoring Limit.
	Count int64
}

// PutOptions shape a Put.
type PutOptions struct {
	// PrevKV returns the key-value pair before the put, if there was one.
	PrevKV bool
}

// PutResult is the answer of a Put.
type PutResult struct {
	Header Header
	PrevKV *KeyValue
}

// DeleteOptions select the keys of a DeleteRange.
type DeleteOptions struct {
	// End is the exclusive end of the key range, as in RangeOptions.
	End string
	// PrevKV returns the deleted key-value pairs.
	PrevKV bool
}

// DeleteResult is the answer of a DeleteRange.
type DeleteResult struct {
	Header  Header
	Deleted int64
	PrevKVs []KeyValue
}

// CompactResult is the answer of a Compact.
type CompactResult struct {
	Header Header
}

// CompareTarget is what a Compare looks at.
type CompareTarget int

// The compare targets.
const (
	CompareVersion CompareTarget = iota
	CompareCreate
	CompareMod
	CompareValue
)

// CompareResult is the relation a Compare asks for.
type CompareResult int

// The compare results, in etcd's order.
const (
	Equal CompareResult = iota
	Greater
	Less
	NotEqual
)

// Compare is one guard of a Txn. A missing key has version, create and mod
// revision 0 (so creates guard with CompareMod Equal 0), and a value compare
// on a missing key is false.
type Compare struct {
	Key string
	// End makes the compare hold for every key in [Key, End); "" means only Key.
	End    string
	Target CompareTarget
	Result CompareResult
	// Int is the version or revision compared with, for the non-value targets.
	Int int64
	// Value is the value compared with, for CompareValue.
	Value []byte
}

// ModRevision returns the compare "mod_revision(key) <result> rev".
func ModRevision(key string, result CompareResult, rev int64) Compare {
	return Compare{Key: key, Target: CompareMod, Result: result, Int: rev}
}

// Version returns the compare "version(key) <result> v".
func Version(key string, result CompareResult, v int64) Compare {
	return Compare{Key: key, Target: CompareVersion, Result: result, Int: v}
}

// Value returns the compare "value(key) <result> v".
func Value(key string, result CompareResult, v []byte) Compare {
	return Compare{Key: key, Target: CompareValue, Result: result, Value: v}
}

// OpType is the kind of an Op.
type OpType int

// The operation types of a Txn.
const (
	OpRange OpType = iota + 1
	OpPut
	OpDelete
)

// Op is one operation of a Txn branch. Only the options of its Type are read.
type Op struct {
	Type   OpType
	Key    string
	Value  []byte
	Range  RangeOptions
	Put    PutOptions
	Delete DeleteOptions
}

// OpGet returns a range operation.
func OpGet(key string, opts RangeOptions) Op { return Op{Type: OpRange, Key: key, Range: opts} }

// OpPutKV returns a put operation.
func OpPutKV(key string, value []byte, opts PutOptions) Op {
	return Op{Type: OpPut, Key: key, Value: value, Put: opts}
}

// OpDel returns a delete operation.
func OpDel(key string, opts DeleteOptions) Op { return Op{Type: OpDelete, Key: key, Delete: opts} }

// Txn is an etcd transaction: if every Compare holds, Success runs, else
// Failure. The whole txn consumes one revision if it writes anything.
type Txn struct {
	Compare []Compare
	Success []Op
	Failure []Op
}

// OpResult is the answer of one Op; exactly the field of its Type is set.
type OpResult struct {
	Type   OpType
	Range  *RangeResult
	Put    *PutResult
	Delete *DeleteResult
}

// TxnResult is the answer of a Txn.
type TxnResult struct {
	Header    Header
	Succeeded bool
	Responses []OpResult
}

// KV is the key-value API of etcd that the simulator uses.
type KV interface {
	// Range reads key (or [key, opts.End)) at opts.Rev.
	Range(ctx context.Context, key string, opts RangeOptions) (*RangeResult, error)
	// Put writes key and consumes one revision.
	Put(ctx context.Context, key string, value []byte, opts PutOptions) (*PutResult, error)
	// DeleteRange deletes key (or [key, opts.End)); it consumes one revision
	// only if something was deleted.
	DeleteRange(ctx context.Context, key string, opts DeleteOptions) (*DeleteResult, error)
	// Txn runs a transaction.
	Txn(ctx context.Context, txn Txn) (*TxnResult, error)
	// Compact discards history below rev.
	Compact(ctx context.Context, rev int64) (*CompactResult, error)
	// Rev returns the current revision and the compacted revision (0 if
	// nothing was compacted, as far as the engine can tell).
	Rev(ctx context.Context) (current, compacted int64, err error)
}

// EventType is the kind of a watch Event.
type EventType int

// The event types, in etcd's order.
const (
	EventPut EventType = iota
	EventDelete
)

// Event is one change seen by a watcher. A delete event's KV has only Key
// and ModRevision (the deletion revision) set.
type Event struct {
	Type   EventType
	KV     KeyValue
	PrevKV *KeyValue
}

// WatchOptions select what a watcher sees.
type WatchOptions struct {
	// End is the exclusive end of the watched key range, as in RangeOptions.
	End string
	// Rev is the first revision to deliver; <= 0 means changes after the
	// current revision. A Rev below the compacted revision yields one
	// response with CompactRevision set and Canceled, then nothing.
	Rev int64
	// PrevKV attaches the previous key-value pair to each event.
	PrevKV bool
	// ProgressNotify makes the watcher receive the store's periodic progress
	// notifications (see Store.NotifyProgress).
	ProgressNotify bool
}

// WatchResponse is one batch delivered to a watcher. A response with no
// events that is not canceled is a progress notification: everything up to
// Header.Revision has been delivered.
type WatchResponse struct {
	Header          Header
	WatchID         int64
	Events          []Event
	CompactRevision int64
	Canceled        bool
	CancelReason    string
}

// IsProgressNotify reports whether r is a progress notification.
func (r WatchResponse) IsProgressNotify() bool {
	return len(r.Events) == 0 && !r.Canceled && r.CompactRevision == 0
}

// Watcher is one watch. It is pull-based so a discrete-event simulator can
// drive it without goroutines: the embedded store appends responses while a
// write runs, and Drain hands them over. Response boundaries may differ
// between engines; the sequence of events does not.
type Watcher interface {
	// ID is the watch ID, unique within its store.
	ID() int64
	// Drain returns the responses queued since the last Drain, oldest first,
	// and nil if there are none. It never blocks.
	Drain() []WatchResponse
	// Close cancels the watch; later writes are not delivered.
	Close() error
}

// WatchKV is KV plus watches: the full engine interface.
type WatchKV interface {
	KV
	// Watch starts a watch on key (or [key, opts.End)).
	Watch(ctx context.Context, key string, opts WatchOptions) (Watcher, error)
	// RequestProgress queues a progress notification carrying the current
	// revision on every watcher that has caught up.
	RequestProgress(ctx context.Context) error
	// Close releases the engine; watchers stop.
	Close() error
}

// PrefixEnd returns the range end that selects every key with the given
// prefix, as etcd's clientv3.GetPrefixRangeEnd does: the prefix with its
// last byte below 0xff incremented and the rest dropped, or "\x00" (every
// key) when there is no such byte.
func PrefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return "\x00"
}
