package audit

import (
	"fmt"
	"strconv"
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

func TestKeyHashWith(t *testing.T) {
	h, g := hashKey("user", "pod", "agent"), hashKey("user", "pod", "agent2")
	if h.With("") != h {
		t.Errorf("With(\"\") is not the hash itself")
	}
	seen := map[KeyHash]string{}
	for _, base := range []KeyHash{h, g} {
		for _, s := range []string{"", "kubectl", "kubectl-edit", "a", "b"} {
			k := base.With(s)
			if k.a == 0 {
				t.Errorf("%v.With(%q): a is 0, which marks an unset hash", base, s)
			}
			if k != base.With(s) {
				t.Errorf("%v.With(%q): two hashes", base, s)
			}
			name := fmt.Sprintf("%v+%q", base, s)
			if o, ok := seen[k]; ok {
				t.Errorf("%s and %s share a hash", name, o)
			}
			seen[k] = name
		}
	}
}

// KeyMap holds what a Go map holds, through its growths, updates and
// misses.
func TestKeyMapMatchesMap(t *testing.T) {
	var m KeyMap[int]
	if _, ok := m.Get(hashKey("x")); ok || m.Len() != 0 {
		t.Fatalf("an empty KeyMap finds a key or has a length")
	}
	want := map[KeyHash]int{}
	for i := range 5000 {
		k := hashKey(strconv.Itoa(i % 3000))
		m.Put(k, i)
		want[k] = i
		if miss := hashKey("miss", strconv.Itoa(i)); i%7 == 0 {
			if v, ok := m.Get(miss); ok {
				t.Fatalf("after %d puts: a key never put is found, with %d", i+1, v)
			}
		}
	}
	if m.Len() != len(want) {
		t.Fatalf("Len %d, want %d", m.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get: %d, %v; want %d", got, ok, v)
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Put of the zero KeyHash did not panic")
		}
	}()
	m.Put(KeyHash{}, 1)
}
