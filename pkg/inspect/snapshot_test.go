package inspect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/diff"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
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

// TestTrackerDiffsAsAgainstTheDecodedVersion holds the rows' changes, as
// they render, equal to a diff of the previous version as the watch decoded
// it (an integral float may read back as an integer: both print the same),
// for values
// whose JSON form is delicate (big integers, floats, escapes, nulls, lists),
// a generation bump, a managedFields-only write and a deletion after a gap.
func TestTrackerDiffsAsAgainstTheDecodedVersion(t *testing.T) {
	versions := []string{
		`{"spec":{"n":1,"f":0.5,"s":"a","l":[1,2],"m":{"k":"v"}},"metadata":{"generation":1}}`,
		`{"spec":{"n":9007199254740993,"f":1e300,"s":"<&>\u2028\"","l":[1,2,{"a":null}],"m":{"k":"v","j":[]}},"metadata":{"generation":2}}`,
		`{"spec":{"n":-9007199254740993,"f":1.0,"s":"","l":[],"m":null,"x":{}},"metadata":{"generation":2}}`,
		`{"spec":{"n":-9007199254740993,"f":1.0,"s":"","l":[],"m":null,"x":{}},"metadata":{"generation":2}}`,
		`{"spec":{"n":1.5,"f":2.5,"s":"é","l":[{"name":"a","v":1},{"name":"b","v":2}]},"status":{"ready":true},"metadata":{"generation":3,"labels":{"a":"b"}}}`,
	}
	differ := NewTracker(TrackerConfig{}).differ
	tr := NewTracker(TrackerConfig{})
	var prev map[string]any
	for i, v := range versions {
		decode := func() map[string]any {
			obj := decodeJSON(t, v)
			obj["kind"] = "Deployment"
			md := obj["metadata"].(map[string]any)
			md["name"], md["namespace"], md["uid"], md["resourceVersion"] = "web", "shop", "u-1", fmt.Sprint(10+i)
			md["managedFields"] = []any{map[string]any{"manager": "m", "operation": "Update", "apiVersion": "v1", "time": t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339), "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
			return obj
		}
		obj := decode()
		typ := follow.Modified
		if i == 0 {
			typ = follow.Added
		}
		rows := tr.Observe(follow.Event{Type: typ, Time: t0, Resource: deploy, Object: &unstructured.Unstructured{Object: obj}})
		if i > 0 {
			if diff := cmp.Diff(rendered(t, differ.Objects(prev, decode())), rendered(t, rows[0].Fields)); diff != "" {
				t.Errorf("version %d (-want +got):\n%s", i, diff)
			}
			if got, wantBump := rows[0].GenerationBumped, i != 2 && i != 3; got != wantBump {
				t.Errorf("version %d: generationBumped %v, want %v", i, got, wantBump)
			}
		}
		prev = decode()
	}
	rows := tr.Observe(follow.Event{Type: follow.Synced, Reason: follow.SyncRelist, Time: t0, Resource: deploy, ResourceVersion: "99", GapFrom: "14"})
	if got := fmt.Sprintf("%d %s %s %d", len(rows), rows[1].Type, rows[1].Object, *rows[1].Generation); got != "2 DELETED deployment.apps/web 3" {
		t.Errorf("relist without the object: got %s", got)
	}
}

// rendered returns the changes as the table and -o json show them.
func rendered(t *testing.T, cs []diff.Change) []string {
	t.Helper()
	var out []string
	for _, c := range cs {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.String()+" "+string(b))
	}
	return out
}
