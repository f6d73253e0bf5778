package audit

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// KeyHash is a 128-bit hash of a key of strings (an object's reference, a
// client's identity): two maphash hashes of the same bytes under
// independent seeds. Analyses number objects and clients by it instead of
// by their strings: Decode's goroutines hash the strings as they decode
// them, and the goroutine that numbers them, in the log's order, does not
// read them again (on another processor, whose cache does not hold them)
// unless the key is new. Two different keys share a KeyHash with a
// probability of about n²/2¹²⁹ for n keys: 1.5·10⁻²⁷ for a million.
type KeyHash struct{ a, b uint64 }

var keySeedA, keySeedB = maphash.MakeSeed(), maphash.MakeSeed()

// hashKey hashes strs, each after its length (so that ("ab", "c") and
// ("a", "bc") differ), in a buffer on the stack for the usual keys.
func hashKey(strs ...string) KeyHash {
	var stack [256]byte
	b := stack[:0]
	for _, s := range strs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	// a is never 0: the zero KeyHash is Event's "not set".
	return KeyHash{maphash.Bytes(keySeedA, b) | 1, maphash.Bytes(keySeedB, b)}
}

// With is the KeyHash of h's key extended by s: the same for the same h
// and s, different otherwise with the probability of two keys' hashes;
// With("") is h. conflicts keys a client's writer by its hash with the
// field manager.
func (h KeyHash) With(s string) KeyHash {
	if s == "" {
		return h
	}
	a, b := maphash.String(keySeedA, s), maphash.String(keySeedB, s)
	// The rotations keep (h, s) and (s's hash as h, h as s) apart.
	return KeyHash{(bits.RotateLeft64(h.a, 23) ^ a) | 1, bits.RotateLeft64(h.b, 41) ^ b}
}

// KeyMap maps KeyHashes to values: a table of slots indexed by the hash's
// own bits, which are random already, probed in order. A lookup reads one
// slot, key and value side by side, in the usual case. Go's map hashes a
// 16-byte key again and reads a group's control word before its slot: two
// misses of the processor's cache per lookup where the table is larger
// than the cache, as an analysis's tens of thousands of objects are. The
// zero KeyHash is not a key (Event's "not set"; hashKey never makes it).
type KeyMap[V any] struct {
	slots []keySlot[V]
	n     int
}

type keySlot[V any] struct {
	key KeyHash
	val V
}

// Len is the number of keys.
func (m *KeyMap[V]) Len() int { return m.n }

// Get returns k's value, and whether k is in m.
func (m *KeyMap[V]) Get(k KeyHash) (V, bool) {
	if m.n > 0 {
		mask := uint64(len(m.slots) - 1)
		for i := k.b & mask; ; i = (i + 1) & mask {
			s := &m.slots[i]
			if s.key == k {
				return s.val, true
			}
			if s.key.a == 0 {
				break
			}
		}
	}
	var zero V
	return zero, false
}

// Put sets k's value.
func (m *KeyMap[V]) Put(k KeyHash, v V) {
	if k.a == 0 {
		panic("audit: the zero KeyHash is not a key")
	}
	// At most half full: a miss then probes about two slots.
	if 2*(m.n+1) > len(m.slots) {
		old := m.slots
		m.slots, m.n = make([]keySlot[V], max(64, 2*len(old))), 0
		for i := range old {
			if old[i].key.a != 0 {
				m.Put(old[i].key, old[i].val)
			}
		}
	}
	mask := uint64(len(m.slots) - 1)
	for i := k.b & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.key.a == 0 {
			s.key, s.val = k, v
			m.n++
			return
		}
		if s.key == k {
			s.val = v
			return
		}
	}
}
