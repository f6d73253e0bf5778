package audit

import (
	"hash/maphash"
	"strings"
)

// valueMemo remembers the user objects, and the objects skipped at the top
// level (annotations, say), that one decoding goroutine has read. An API
// server writes each client's user object (name, uid, groups, extra) byte
// for byte the same in every event of that client, and a value that is
// byte for byte one the scanner has read whole is that same value again:
// the scanner takes its fields from here instead of reading it again.
// Which entry to compare with is found by a hash of the bytes that follow
// the value's start; a wrong guess only costs a comparison.
//
// Example: two events of system:serviceaccount:team-24:controller-61 in
// pod controller-61-6f9c61-x1z have the same 450-byte user object; the
// second event's is compared, not scanned (about 80 strings a line in
// all, 15 of them in the user object).
type valueMemo struct {
	seed    maphash.Seed
	buckets [memoBuckets][memoWays]memoEntry
	next    [memoBuckets]uint8
}

const (
	memoBuckets = 512
	memoWays    = 4
	// memoPrefix is how many bytes from a value's start are hashed: enough
	// to reach the pod's fields of a service account's user object.
	memoPrefix = 320
	// memoMax is the longest value remembered.
	memoMax = 2048
)

type memoEntry struct {
	// raw is the value, copied; user's strings point into it. skipped
	// marks a value skipped, not read as a user object.
	raw     string
	user    userFields
	skipped bool
}

func newValueMemo() *valueMemo {
	return &valueMemo{seed: maphash.MakeSeed()}
}

// bucket is where a value starting at rest is looked for and kept.
func (m *valueMemo) bucket(rest string) int {
	return int(maphash.String(m.seed, rest[:min(len(rest), memoPrefix)]) % memoBuckets)
}

// find returns the remembered value rest starts with, if any.
func (m *valueMemo) find(b int, rest string) *memoEntry {
	for i := range m.buckets[b] {
		if e := &m.buckets[b][i]; e.raw != "" && strings.HasPrefix(rest, e.raw) {
			return e
		}
	}
	return nil
}

// keep remembers raw, read whole into u (whose strings are in raw), or
// skipped.
func (m *valueMemo) keep(b int, raw string, u userFields, skipped bool) {
	if len(raw) > memoMax {
		return
	}
	c := strings.Clone(raw)
	e := &m.buckets[b][m.next[b]]
	m.next[b] = (m.next[b] + 1) % memoWays
	e.raw, e.skipped = c, skipped
	e.user = userFields{username: rebase(u.username, raw, c), pod: rebase(u.pod, raw, c), seen: u.seen}
}

// rebase is s, a substring of old (or not, when unquoted), as the same
// substring of its copy c.
func rebase(s, old, c string) string {
	if s == "" {
		return ""
	}
	if i := strings.Index(old, s); i >= 0 {
		return c[i : i+len(s)]
	}
	return strings.Clone(s)
}
