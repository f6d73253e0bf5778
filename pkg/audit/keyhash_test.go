package audit

import (
	"strings"
	"testing"
)

func TestHashKeySeparatesStrings(t *testing.T) {
	long := strings.Repeat("n", 300) // past hashKey's buffer on the stack
	keys := [][]string{
		{"ab", "c"}, {"a", "bc"}, {"", "abc"}, {"abc", ""}, {"abc"},
		{"apps", "deployments", "ns", "web"}, {"apps", "deployments", "nsw", "eb"},
		{"", "configmaps", "ns", long}, {"", "configmaps", "ns", long + "x"},
	}
	seen := map[KeyHash][]string{}
	for _, k := range keys {
		h := hashKey(k...)
		if h.a == 0 {
			t.Errorf("%q: a is 0, which marks an unset hash", k)
		}
		if h != hashKey(k...) {
			t.Errorf("%q: two hashes", k)
		}
		if o, ok := seen[h]; ok {
			t.Errorf("%q and %q share a hash", k, o)
		}
		seen[h] = k
	}
}

// Decode sets the hashes (Options.KeyHashes) as ObjectHash and ClientHash
// compute them for an event made some other way (a webhook's, a test's),
// and leaves them to be computed when it is not asked to.
func TestDecodeSetsKeyHashes(t *testing.T) {
	lines := ok409 + "\n" + strings.Replace(ok409, `"name":"`, `"name":"x`, 1) + "\n"
	unasked, _, err := decodeString(t, lines, Options{})
	if err != nil || len(unasked) != 2 || unasked[0].objHash != (KeyHash{}) || unasked[0].clientHash != (KeyHash{}) {
		t.Fatalf("without KeyHashes: %d events, %v, hashes %v %v", len(unasked), err, unasked[0].objHash, unasked[0].clientHash)
	}
	got, _, err := decodeString(t, lines, Options{KeyHashes: true})
	if err != nil || len(got) != 2 {
		t.Fatalf("%d events, %v", len(got), err)
	}
	e := got[0]
	if e.objHash == (KeyHash{}) || e.clientHash == (KeyHash{}) {
		t.Fatalf("Decode set no hash: %+v", e)
	}
	plain := e
	plain.objHash, plain.clientHash = KeyHash{}, KeyHash{}
	if plain.ObjectHash() != e.ObjectHash() || plain.ClientHash() != e.ClientHash() {
		t.Errorf("computed hashes differ from Decode's")
	}
	if got[1].ObjectHash() == e.ObjectHash() {
		t.Errorf("objects %q and %q share a hash", got[1].ObjectRef.Name, e.ObjectRef.Name)
	}
	if got[1].ClientHash() != e.ClientHash() {
		t.Errorf("one client, two hashes")
	}
}
