package audit

import (
	"encoding/binary"
	"hash/maphash"
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
