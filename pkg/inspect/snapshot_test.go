package inspect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := utiljson.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSnapshotReadsBackWhatTheDiffCompares checks that a snapshot gives back
// the object as decoded from the watch, but for the fields it leaves out:
// numbers keep their types, strings their escapes.
func TestSnapshotReadsBackWhatTheDiffCompares(t *testing.T) {
	const obj = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"shop","uid":"u-1","resourceVersion":"12","generation":3,
		"labels":{"a":"<b>&\u2028"},"managedFields":[{"manager":"m","operation":"Update","fieldsV1":{"f:data":{}}}]},
		"data":{"big":"9007199254740993","s":"x\"y"},"spec":{"n":9007199254740993,"f":1.5,"e":1e300,"z":0,"neg":-4,"null":null,"list":[1,"a",{"k":[]}],"empty":{}}}`
	u := &unstructured.Unstructured{Object: decodeJSON(t, obj)}
	entries, err := readEntries(u)
	if err != nil {
		t.Fatal(err)
	}
	var sets setCache
	s := newSnapshot(u.Object, encodeBody(u.Object), entries, &sets)
	k := keyOf("v1/configmaps", u)
	got := s.object(k, "u-1")
	want := decodeJSON(t, obj)
	md := want["metadata"].(map[string]any)
	delete(md, "managedFields")
	delete(md, "resourceVersion")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	delete(md, "uid")
	if diff := cmp.Diff(want, s.unstructured(k).Object); diff != "" {
		t.Errorf("without the uid (-want +got):\n%s", diff)
	}
	if len(s.entries) != 1 || s.entries[0].fieldsV1.Value() != `{"f:data":{}}` || s.entries[0].head.Value().id != "m/Update/" {
		t.Errorf("entries: got %+v", s.entries)
	}
	if !s.unchanged(encodeBody(decodeJSON(t, obj))) {
		t.Error("the same object reads as changed")
	}
	other := decodeJSON(t, obj)
	other["spec"].(map[string]any)["z"] = int64(1)
	if s.unchanged(encodeBody(other)) {
		t.Error("a changed object reads as unchanged")
	}
}

func TestFingerprint(t *testing.T) {
	tries := []string{
		`{}`,
		`{"f:a":{}}`,
		`{"f:b":{}}`,
		`{"f:a":{"f:b":{}}}`,
		`{"f:a":{},"f:b":{}}`,
		`{"f:a":{".":{},"f:b":{}}}`,
		`{"f:a":{"f:a":{}}}`,
		`{"f:spec":{"f:replicas":{}},"f:status":{"f:replicas":{}}}`,
		`{"f:spec":{"f:replicas":{},"f:status":{}}}`,
	}
	seen := map[uint64]string{}
	for _, s := range tries {
		fp, ok := fingerprint(decodeJSON(t, s))
		if !ok {
			t.Fatalf("%s: not a trie", s)
		}
		if prev, dup := seen[fp]; dup {
			t.Errorf("%s and %s share fingerprint %x", prev, s, fp)
		}
		seen[fp] = s
	}
	// Map order does not matter: the same trie built twice.
	a, _ := fingerprint(map[string]any{"f:a": map[string]any{}, "f:b": map[string]any{"f:c": map[string]any{}}})
	b, _ := fingerprint(map[string]any{"f:b": map[string]any{"f:c": map[string]any{}}, "f:a": map[string]any{}})
	if a != b {
		t.Errorf("the same trie has fingerprints %x and %x", a, b)
	}
	if _, ok := fingerprint(map[string]any{"f:a": "x"}); ok {
		t.Error("a trie with a string value has a fingerprint")
	}
}

// TestSetCacheKeepsEachEntrysOwnSet checks that cached and encoded sets are
// the same, across the cache starting again.
func TestSetCacheKeepsEachEntrysOwnSet(t *testing.T) {
	var c setCache
	for i := range maxCachedSets + 10 {
		for _, s := range []string{`{"f:data":{"f:x":{}}}`, `{"f:data":{"f:k` + string(rune('a'+i%26)) + `":{}}}`} {
			e := &entryView{raw: map[string]any{"fieldsV1": decodeJSON(t, s)}}
			if got := c.intern(e).Value(); got != s {
				t.Fatalf("round %d: got %s, want %s", i, got, s)
			}
		}
	}
	if len(c.byHash) > maxCachedSets {
		t.Errorf("the cache holds %d sets, want at most %d", len(c.byHash), maxCachedSets)
	}
	if got := c.intern(&entryView{raw: map[string]any{}}).Value(); got != "" {
		t.Errorf("an entry without fieldsV1 keeps %q", got)
	}
}
