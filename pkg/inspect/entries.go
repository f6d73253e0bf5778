package inspect

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// entryView is a managedFields entry whose identity and time are read at
// once and whose field set is decoded (with managedfields.DecodeEntry) only
// when attribution needs it: on a live cluster exactly one entry's time
// moves per write, which names the writer without decoding any set.
type entryView struct {
	index int
	meta  managedfields.Entry // Fields unset until decoded
	id    string
	// raw is the entry in the object; stored the entry as a snapshot kept
	// it (raw is nil then).
	raw    map[string]any
	stored *storedEntry

	decoded bool
	fields  *fieldpath.Set
	err     error
}

// fieldsJSON returns the entry's fieldsType and its FieldsV1 as JSON (nil
// when it has none).
func (e *entryView) fieldsJSON() (string, []byte, error) {
	if e.stored != nil {
		return e.stored.head.Value().fieldsType, []byte(e.stored.fieldsV1.Value()), nil
	}
	ft, _ := e.raw["fieldsType"].(string)
	f, ok := e.raw["fieldsV1"]
	if !ok || f == nil {
		return ft, nil, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return ft, nil, &managedfields.EntryError{Index: e.index, Manager: e.meta.Manager, Err: err}
	}
	return ft, b, nil
}

// set returns the entry's decoded field set.
func (e *entryView) set() (*fieldpath.Set, error) {
	if e.decoded {
		return e.fields, e.err
	}
	e.decoded = true
	mf := metav1.ManagedFieldsEntry{
		Manager: e.meta.Manager, Operation: e.meta.Operation, APIVersion: e.meta.APIVersion, Subresource: e.meta.Subresource,
	}
	ft, raw, err := e.fieldsJSON()
	if err != nil {
		e.err = err
		return nil, err
	}
	mf.FieldsType = ft
	if len(raw) > 0 {
		mf.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	}
	d, err := managedfields.DecodeEntry(e.index, mf)
	if err != nil {
		e.err = err
		return nil, err
	}
	e.fields = d.Fields()
	return e.fields, nil
}

// viewsOf wraps decoded entries (fields known).
func viewsOf(es []managedfields.Entry) []*entryView {
	out := make([]*entryView, len(es))
	for i, e := range es {
		out[i] = &entryView{index: e.Index, meta: e, id: e.ID(), decoded: true, fields: e.Fields()}
	}
	return out
}

// readEntries reads the identity and time of every managedFields entry of
// u. It returns nil and no error when there are none.
func readEntries(u *unstructured.Unstructured) ([]*entryView, error) {
	md, _ := u.Object["metadata"].(map[string]any)
	raw, found := md["managedFields"]
	if !found || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata.managedFields: want a list, got %T", raw)
	}
	out := make([]*entryView, 0, len(list))
	for i, r := range list {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, &managedfields.EntryError{Index: i, Err: fmt.Errorf("want an object, got %T", r)}
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		e := managedfields.Entry{Index: i, Manager: str("manager"), Operation: metav1.ManagedFieldsOperationType(str("operation")), APIVersion: str("apiVersion"), Subresource: str("subresource")}
		switch e.Operation {
		case metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate:
		default:
			return nil, &managedfields.EntryError{Index: i, Manager: e.Manager, Err: fmt.Errorf("operation %q: want Apply or Update", e.Operation)}
		}
		if ts := str("time"); ts != "" {
			t, err := time.Parse(time.RFC3339, ts)
			if err != nil {
				return nil, &managedfields.EntryError{Index: i, Manager: e.Manager, Err: fmt.Errorf("time: %w", err)}
			}
			e.Time = t
		}
		out = append(out, &entryView{index: i, meta: e, id: e.ID(), raw: m})
	}
	return out, nil
}
