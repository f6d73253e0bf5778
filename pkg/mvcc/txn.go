package mvcc

import (
	"bytes"
	"context"
)

// Txn runs a transaction the way etcd's kvServer.Txn and txn.Txn do:
//
//  1. request checks: too many ops (ErrTooManyOps), empty keys
//     (ErrEmptyKey), a put overlapping another put or a delete of the same
//     branch (ErrDuplicateKey);
//  2. the compares pick the branch;
//  3. ranges of that branch at a compacted or future revision fail the
//     whole txn (nothing is written);
//  4. the branch runs; reads after a write of the same txn see the write.
//
// The txn consumes one revision if it changed anything. Inner response
// headers carry only a revision, as etcd's do.
func (s *Store) Txn(_ context.Context, t Txn) (*TxnResult, error) {
	if err := checkTxn(t, s.cfg.MaxTxnOps); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	succeeded := true
	for _, c := range t.Compare {
		if !s.unsafeCompare(c) {
			succeeded = false
			break
		}
	}
	ops := t.Success
	if !succeeded {
		ops = t.Failure
	}
	for _, op := range ops {
		if op.Type != OpRange {
			continue
		}
		switch rev := op.Range.Rev; {
		case rev == 0:
		case rev > s.current:
			return nil, ErrFutureRev
		case rev < s.compactMain:
			return nil, ErrCompacted
		}
	}

	res := &TxnResult{Succeeded: succeeded, Responses: make([]OpResult, len(ops))}
	tw := s.unsafeBegin()
	for i, op := range ops {
		res.Responses[i].Type = op.Type
		switch op.Type {
		case OpRange:
			cur := tw.rev()
			r, err := s.unsafeRange(op.Key, op.Range, cur)
			if err != nil {
				// Ruled out by the checks above.
				panic("mvcc: range in txn failed after its checks: " + err.Error())
			}
			r.Header = Header{Revision: cur}
			res.Responses[i].Range = r
		case OpPut:
			res.Responses[i].Put = s.unsafePut(&tw, op.Key, op.Value, op.Put)
		case OpDelete:
			res.Responses[i].Delete = s.unsafeDelete(&tw, op.Key, op.Delete)
		}
	}
	s.unsafeEnd(&tw)
	res.Header = s.header(s.current)
	return res, nil
}

// unsafeCompare evaluates one compare at the current revision. A compare
// over a range holds only if it holds for every key in it; over no key it
// compares a zero key-value pair, except that a value compare fails.
func (s *Store) unsafeCompare(c Compare) bool {
	if c.End == "" {
		// The common case, without collecting.
		if ki, ok := s.keys[c.Key]; ok {
			if r, ok := ki.at(s.current); ok {
				return compareKV(c, s.kvOf(ki, r, false))
			}
		}
		if c.Target == CompareValue {
			return false
		}
		return compareKV(c, KeyValue{})
	}
	var live []KeyValue
	s.unsafeAscend(c.Key, c.End, func(ki *keyIndex) {
		if r, ok := ki.at(s.current); ok {
			live = append(live, s.kvOf(ki, r, false))
		}
	})
	if len(live) == 0 {
		if c.Target == CompareValue {
			return false
		}
		return compareKV(c, KeyValue{})
	}
	for _, kv := range live {
		if !compareKV(c, kv) {
			return false
		}
	}
	return true
}

func compareKV(c Compare, kv KeyValue) bool {
	var r int
	switch c.Target {
	case CompareValue:
		r = bytes.Compare(kv.Value, c.Value)
	case CompareCreate:
		r = cmpInt(kv.CreateRevision, c.Int)
	case CompareMod:
		r = cmpInt(kv.ModRevision, c.Int)
	case CompareVersion:
		r = cmpInt(kv.Version, c.Int)
	}
	switch c.Result {
	case Equal:
		return r == 0
	case NotEqual:
		return r != 0
	case Greater:
		return r > 0
	case Less:
		return r < 0
	}
	return true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkTxn is etcd's checkTxnRequest followed by checkIntervals on both
// branches.
func checkTxn(t Txn, maxOps int) error {
	if max(len(t.Compare), len(t.Success), len(t.Failure)) > maxOps {
		return ErrTooManyOps
	}
	for _, c := range t.Compare {
		if c.Key == "" {
			return ErrEmptyKey
		}
	}
	for _, branch := range [][]Op{t.Success, t.Failure} {
		for _, op := range branch {
			if op.Key == "" {
				return ErrEmptyKey
			}
		}
	}
	for _, branch := range [][]Op{t.Success, t.Failure} {
		if err := checkIntervals(branch); err != nil {
			return err
		}
	}
	return nil
}

// checkIntervals rejects a branch whose puts repeat a key or fall in one of
// its delete ranges. Like etcd it treats a delete's range end literally
// ("\x00" is not "every key" here) and an empty end as infinity.
func checkIntervals(ops []Op) error {
	if len(ops) < 2 {
		return nil
	}
	type interval struct{ begin, end string }
	var dels []interval
	for _, op := range ops {
		if op.Type != OpDelete {
			continue
		}
		if op.Delete.End != "" {
			dels = append(dels, interval{op.Key, op.Delete.End})
		} else {
			dels = append(dels, interval{op.Key, op.Key + "\x00"})
		}
	}
	puts := make(map[string]struct{})
	for _, op := range ops {
		if op.Type != OpPut {
			continue
		}
		if _, ok := puts[op.Key]; ok {
			return ErrDuplicateKey
		}
		p := interval{op.Key, op.Key + "\x00"}
		for _, d := range dels {
			if affineLess(p.begin, d.end) && affineLess(d.begin, p.end) {
				return ErrDuplicateKey
			}
		}
		puts[op.Key] = struct{}{}
	}
	return nil
}

// affineLess compares like etcd's StringAffineComparable: "" is above
// every other string.
func affineLess(a, b string) bool {
	switch {
	case a == "":
		return false
	case b == "":
		return true
	}
	return a < b
}
