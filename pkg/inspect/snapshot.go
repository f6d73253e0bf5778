package inspect

import (
	"bytes"
	"encoding/json"
	"time"
	"unique"

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
	body []byte
	// obj is set only when the object could not be encoded as JSON, which
	// an object decoded from JSON always can.
	obj     map[string]any
	entries []storedEntry
}

// storedEntry is a managedFields entry of a snapshot.
type storedEntry struct {
	head  unique.Handle[entryHead]
	index int32
	time  time.Time
	// fieldsV1 is the entry's FieldsV1 as JSON; "" when it has none.
	fieldsV1 unique.Handle[string]
}

// entryHead is the identity of an entry, interned: few managers write many
// objects.
type entryHead struct {
	id, manager, operation, apiVersion, subresource, fieldsType string
}

// newSnapshot keeps what later versions of obj need; body is
// encodeBody(obj), entries are obj's as readEntries returned them.
func newSnapshot(obj map[string]any, body []byte, entries []*entryView) snapshot {
	s := snapshot{body: body}
	if body == nil {
		s.obj = obj
	}
	if len(entries) > 0 {
		s.entries = make([]storedEntry, len(entries))
		for i, e := range entries {
			s.entries[i] = e.keep()
		}
	}
	return s
}

// encodeBody returns obj as compact JSON without metadata.managedFields,
// .resourceVersion, and .name, .namespace and .uid when they are non-empty
// strings; nil when it cannot be encoded.
func encodeBody(obj map[string]any) []byte {
	top := obj
	if md, ok := obj["metadata"].(map[string]any); ok {
		slim := make(map[string]any, len(md))
		for k, v := range md {
			switch k {
			case "managedFields", "resourceVersion":
				continue
			case "name", "namespace", "uid":
				if s, ok := v.(string); ok && s != "" {
					continue
				}
			}
			slim[k] = v
		}
		top = make(map[string]any, len(obj))
		for k, v := range obj {
			top[k] = v
		}
		top["metadata"] = slim
	}
	b, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	return b
}

// object returns the kept version of the object of key k, with uid as its
// metadata.uid (none when empty). Numbers read back as the watch decodes
// them (int64 when integral, else float64), so the diff and the values it
// shows are those of the original.
func (s *snapshot) object(k objKey, uid string) map[string]any {
	if s.body == nil {
		return s.obj
	}
	m := map[string]any{}
	if err := utiljson.Unmarshal(s.body, &m); err != nil {
		// Written by encodeBody: broken only if the encoder is.
		panic("inspect: reading back a snapshot: " + err.Error())
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for f, v := range map[string]string{"name": k.name, "namespace": k.namespace, "uid": uid} {
			if v != "" {
				md[f] = v
			}
		}
	}
	return m
}

// unchanged reports whether next holds the same fields as the snapshot,
// compared as the diff compares them (managedFields, resourceVersion left
// out); nextBody is next's encodeBody.
func (s *snapshot) unchanged(nextBody []byte) bool {
	return s.body != nil && nextBody != nil && bytes.Equal(s.body, nextBody)
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
				APIVersion: h.apiVersion, Subresource: h.subresource, Time: se.time},
			id: h.id, stored: se,
		}
	}
	return out
}

// keep returns the entry as a snapshot keeps it.
func (e *entryView) keep() storedEntry {
	ft, raw, err := e.fieldsJSON()
	if err != nil {
		// Kept as it is: the entry's set fails to decode again with the
		// same error when asked.
		raw = nil
	}
	return storedEntry{
		head: unique.Make(entryHead{id: e.id, manager: e.meta.Manager, operation: string(e.meta.Operation),
			apiVersion: e.meta.APIVersion, subresource: e.meta.Subresource, fieldsType: ft}),
		index:    int32(e.index),
		time:     e.meta.Time,
		fieldsV1: unique.Make(string(raw)),
	}
}
