package inspect

import (
	"math"
	"slices"
	"time"
	"unique"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// snapshot is what the Tracker keeps of the last version of a watched
// object: only what the next version's row needs, in about the size of
// the object's own JSON (BenchmarkTrackerRetained measures it).
//
//   - body is the object as compact JSON (keys sorted, as encoding/json
//     writes maps) without metadata.managedFields and
//     metadata.resourceVersion, which are never diffed, and without
//     metadata.name, .namespace and .uid, which the Tracker keeps already
//     (in the object's key, and the uid as a hash: a version is diffed
//     only against one of the same uid, whose uid object restores). The diff shows the
//     old value of any field that changes, in full in -o json, so every
//     value is kept; JSON is the most compact form the library reads back.
//     Equal bodies mean an unchanged object, without decoding.
//   - entries are the managedFields entries: an interned identity, the time,
//     and the field set as interned FieldsV1 JSON, decoded only when no
//     entry's time moved (then a set that grew names the writer). Objects
//     of a kind mostly share their field sets, so interning keeps one copy.
//
// A decoded map of the same object costs many times its JSON; keeping it
// was the 6.5 KB per small ConfigMap of issue 17.
type snapshot struct {
	// body is a string (16 bytes, not a slice's 24) that shares the bytes
	// encodeBody returned, which nothing writes to after.
	body string
	// obj is set only when the object could not be encoded as JSON, which
	// an object decoded from JSON always can.
	obj     map[string]any
	entries []storedEntry
}

// storedEntry is a managedFields entry of a snapshot.
type storedEntry struct {
	head unique.Handle[entryHead]
	// fieldsV1 is the entry's FieldsV1 as JSON; "" when it has none.
	fieldsV1 unique.Handle[string]
	// sec and nsec are the entry's time as Unix seconds and nanoseconds
	// (sec is noTime when it has none): attribution only compares times
	// as instants, and a time.Time costs 24 bytes.
	sec   int64
	nsec  int32
	index int32
}

// noTime is the sec of an entry without a time.
const noTime = math.MinInt64

func (se *storedEntry) time() time.Time {
	if se.sec == noTime {
		return time.Time{}
	}
	return time.Unix(se.sec, int64(se.nsec))
}

// entryHead is the identity of an entry, interned: few managers write many
// objects.
type entryHead struct {
	id, manager, operation, apiVersion, subresource, fieldsType string
}

// newSnapshot keeps what later versions of obj need; body is
// encodeBody(obj), entries are obj's as readEntries returned them.
func newSnapshot(obj map[string]any, body []byte, entries []*entryView, sets *setCache) snapshot {
	var s snapshot
	if body == nil {
		s.obj = obj
	} else {
		s.body = unsafe.String(unsafe.SliceData(body), len(body))
	}
	if len(entries) > 0 {
		s.entries = make([]storedEntry, len(entries))
		for i, e := range entries {
			s.entries[i] = e.keep(sets)
		}
	}
	return s
}

// object returns the kept version of the object of key k, with uid as its
// metadata.uid (none when empty). Numbers read back as the watch decodes
// them (int64 when integral, else float64), so the diff and the values it
// shows are those of the original.
func (s *snapshot) object(k objKey, uid string) map[string]any {
	if s.obj != nil {
		return s.obj
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(unsafe.Slice(unsafe.StringData(s.body), len(s.body)), &m); err != nil {
		// Written by encodeBody: broken only if the encoder is.
		panic("inspect: reading back a snapshot: " + err.Error())
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		restoreIdentity(md, k, uid)
	}
	return m
}

// changedFields returns the top-level fields of the kept version of the
// object of key k (with uid as its metadata.uid) and of next, whose body is
// nextBody, that may differ: those whose bytes differ in the two bodies,
// the only ones a diff of the whole objects could name. Only those of the
// kept version are decoded. metaChanged reports whether metadata is among
// them (else the two hold the same metadata.generation).
func (s *snapshot) changedFields(k objKey, uid string, nextBody []byte, next map[string]any) (old, cur map[string]any, metaChanged bool) {
	if s.obj != nil || nextBody == nil {
		return s.object(k, uid), next, true
	}
	var arr [2][16]member
	was := members(s.body, arr[0][:0])
	now := members(unsafe.String(unsafe.SliceData(nextBody), len(nextBody)), arr[1][:0])
	old, cur = map[string]any{}, map[string]any{}
	for _, w := range was {
		if i := slices.IndexFunc(now, func(n member) bool { return n.key == w.key }); i < 0 || now[i].value != w.value {
			old[unquoteKey(w.key)] = decodeValue(w.value)
		}
	}
	for _, n := range now {
		if i := slices.IndexFunc(was, func(w member) bool { return w.key == n.key }); i < 0 || was[i].value != n.value {
			key := unquoteKey(n.key)
			cur[key] = next[key]
		}
	}
	if md, ok := old["metadata"].(map[string]any); ok {
		restoreIdentity(md, k, uid)
	}
	_, inOld := old["metadata"]
	_, inCur := cur["metadata"]
	return old, cur, inOld || inCur
}

// restoreIdentity sets the metadata fields a body leaves out and the
// tracker keeps (name and namespace in the key, the uid given).
func restoreIdentity(md map[string]any, k objKey, uid string) {
	for f, v := range map[string]string{"name": k.name, "namespace": k.namespace, "uid": uid} {
		if v != "" {
			md[f] = v
		}
	}
}

// unchanged reports whether next holds the same fields as the snapshot,
// compared as the diff compares them (managedFields, resourceVersion left
// out); nextBody is next's encodeBody.
func (s *snapshot) unchanged(nextBody []byte) bool {
	return s.obj == nil && nextBody != nil && s.body == string(nextBody)
}

// unstructured returns the kept version of the object of key k, without
// managedFields, resourceVersion and uid.
func (s *snapshot) unstructured(k objKey) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: s.object(k, "")}
}

// generationOf returns obj's metadata.generation; nil when it has none.
func generationOf(obj map[string]any) (*int64, bool) {
	g, found, err := unstructured.NestedInt64(obj, "metadata", "generation")
	if err != nil || !found {
		return nil, false
	}
	return &g, true
}

// views returns the snapshot's entries for attribute.
func (s *snapshot) views() []*entryView {
	out := make([]*entryView, len(s.entries))
	for i := range s.entries {
		se := &s.entries[i]
		h := se.head.Value()
		out[i] = &entryView{
			index: int(se.index),
			meta: managedfields.Entry{Index: int(se.index), Manager: h.manager, Operation: metav1.ManagedFieldsOperationType(h.operation),
				APIVersion: h.apiVersion, Subresource: h.subresource, Time: se.time()},
			id: h.id, stored: se,
		}
	}
	return out
}

// keep returns the entry as a snapshot keeps it.
func (e *entryView) keep(sets *setCache) storedEntry {
	ft, _ := e.raw["fieldsType"].(string)
	if e.stored != nil {
		ft = e.stored.head.Value().fieldsType
	}
	se := storedEntry{
		head: unique.Make(entryHead{id: e.id, manager: e.meta.Manager, operation: string(e.meta.Operation),
			apiVersion: e.meta.APIVersion, subresource: e.meta.Subresource, fieldsType: ft}),
		index:    int32(e.index),
		sec:      noTime,
		fieldsV1: sets.intern(e),
	}
	if t := e.meta.Time; !t.IsZero() {
		se.sec, se.nsec = t.Unix(), int32(t.Nanosecond())
	}
	return se
}

// maxCachedSets bounds the setCache: past it, it starts again empty.
const maxCachedSets = 4096

// setCache finds the interned FieldsV1 JSON of an entry from a fingerprint
// of its decoded trie, without encoding it: on a live cluster most writes
// leave most entries' sets as they were. It is only a cache: the handles
// stay valid when it is cleared.
//
// A fingerprint is 64 bits. Two different sets that share one would make
// the second entry keep the first's set; the set is read only to tell
// whether an entry grew when no managedFields time moved, so the cost is a
// wrong writer on one row, with odds of about n²/2⁶⁵ for n distinct sets
// cached (1e-12 for 4096): acceptable for a tool that reports, and far
// below the chance of a manager writing twice within the one-second
// precision of managedFields times, which attribution already guesses.
type setCache struct {
	byHash map[uint64]unique.Handle[string]
}

func (c *setCache) intern(e *entryView) unique.Handle[string] {
	if e.stored != nil {
		return e.stored.fieldsV1
	}
	trie, isMap := e.raw["fieldsV1"].(map[string]any)
	fp, ok := fingerprint(trie)
	ok = ok && isMap
	if ok {
		if h, found := c.byHash[fp]; found {
			return h
		}
	}
	_, raw, err := e.fieldsJSON()
	if err != nil {
		// Cannot happen for a trie decoded from JSON; the set then reads
		// as empty.
		raw = nil
	}
	h := unique.Make(string(raw))
	if ok {
		if c.byHash == nil || len(c.byHash) >= maxCachedSets {
			c.byHash = make(map[uint64]unique.Handle[string])
		}
		c.byHash[fp] = h
	}
	return h
}

// fingerprint returns a 64-bit hash of a FieldsV1 trie that does not depend
// on map order: each key's FNV-1a hash is mixed with its child's
// fingerprint, and the mixes are summed. ok is false when the trie holds
// anything but maps.
func fingerprint(trie map[string]any) (fp uint64, ok bool) {
	sum := mix64(uint64(len(trie)))
	for k, v := range trie {
		child, isMap := v.(map[string]any)
		if !isMap {
			return 0, false
		}
		cfp, ok := fingerprint(child)
		if !ok {
			return 0, false
		}
		sum += mix64(fnv1a(k) ^ mix64(cfp+0x9e3779b97f4a7c15))
	}
	return mix64(sum), true
}

// fnv1a is the 64-bit FNV-1a hash of s.
func fnv1a(s string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// mix64 is the finalizer of SplitMix64: it spreads every input bit over the
// output, so that sums of mixed values do not cancel out.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
