package mvcc

// Config holds the store's tunables. DefaultConfig fills the defaults.
type Config struct {
	// ClusterID, MemberID and RaftTerm fill every response header, so
	// etcdctl-shaped output looks like a real single-member cluster's.
	ClusterID uint64
	MemberID  uint64
	RaftTerm  uint64
	// MaxTxnOps is the most compares or operations per txn branch
	// (etcd's --max-txn-ops, default 128).
	MaxTxnOps int
	// WatchBatchMaxRevs is the most revisions one catch-up watch response
	// carries (etcd's watchBatchMaxRevs, 1000).
	WatchBatchMaxRevs int
}

// DefaultConfig returns the defaults: fixed, made-up cluster and member IDs
// (deterministic output), raft term 2, 128 txn ops, 1000 revisions per
// catch-up watch response.
func DefaultConfig() Config {
	return Config{
		ClusterID:         0x1c6a2bb7d5b2d3e4,
		MemberID:          0x8e9e05c52164694d,
		RaftTerm:          2,
		MaxTxnOps:         MaxTxnOps,
		WatchBatchMaxRevs: 1000,
	}
}
