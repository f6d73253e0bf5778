package managedfields

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// Entry is one decoded managedFields entry.
type Entry struct {
	// Index is the entry's position in metadata.managedFields.
	Index       int
	Manager     string
	Operation   metav1.ManagedFieldsOperationType
	APIVersion  string
	Subresource string
	// Time is when the manager last added, changed or removed a field it
	// owns; zero when the server did not record it.
	Time time.Time

	// fields is the decoded FieldsV1 set; nil when it is decoded on demand
	// from lazy.
	fields *fieldpath.Set
	lazy   *lazyFields
}

// lazyFields is the FieldsV1 of an entry that Build read straight into the
// ownership tree: the set is decoded only when someone asks for it.
type lazyFields struct {
	src  map[string]any // validated by Build
	size int
	once sync.Once
	set  *fieldpath.Set
}

// Fields returns the entry's decoded FieldsV1 set, never nil.
func (e Entry) Fields() *fieldpath.Set {
	switch {
	case e.fields != nil:
		return e.fields
	case e.lazy != nil:
		e.lazy.once.Do(func() {
			e.lazy.set = fieldpath.NewSet()
			raw, ok := appendFieldsJSON(make([]byte, 0, 256), e.lazy.src)
			// Build checked the trie already, so neither step fails.
			if ok {
				_ = e.lazy.set.FromJSON(bytes.NewReader(raw))
			}
		})
		return e.lazy.set
	}
	return fieldpath.NewSet()
}

// FieldCount returns how many fields the entry owns.
func (e Entry) FieldCount() int {
	if e.fields == nil && e.lazy != nil {
		return e.lazy.size
	}
	return e.Fields().Size()
}

// IsApply reports whether the entry was written by server-side apply.
func (e Entry) IsApply() bool { return e.Operation == metav1.ManagedFieldsOperationApply }

// ID names the entry the way the API server identifies it: manager,
// operation, apiVersion (Update only) and subresource.
func (e Entry) ID() string {
	id := e.Manager + "/" + string(e.Operation)
	if !e.IsApply() {
		id += "/" + e.APIVersion
	}
	if e.Subresource != "" {
		id += "/" + e.Subresource
	}
	return id
}

var errInvalidFieldsV1 = errors.New("invalid FieldsV1")

// ErrNoManagedFields is returned for objects without managedFields, such as
// those printed by kubectl get without --show-managed-fields.
var ErrNoManagedFields = errors.New("the object has no metadata.managedFields (with kubectl get, add --show-managed-fields)")

// EntryError locates an invalid managedFields entry.
type EntryError struct {
	Index   int
	Manager string
	Err     error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("managedFields[%d] (manager %q): %v", e.Index, e.Manager, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Entries decodes obj's managedFields. It returns ErrNoManagedFields when
// there are none and an *EntryError naming the entry when one is invalid.
func Entries(obj *unstructured.Unstructured) ([]Entry, error) {
	raw, err := rawEntries(obj)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(raw))
	for i, r := range raw {
		m, err := rawEntry(i, r)
		if err != nil {
			return nil, err
		}
		validated := false
		var raw []byte
		fv, isMap := m["fieldsV1"].(map[string]any)
		if isMap {
			// Checking and writing the decoded map is much cheaper than
			// converting it with the generic unstructured converter.
			var ok bool
			raw, ok = appendFieldsJSON(make([]byte, 0, 256), fv)
			if !ok {
				// Walk it again, carefully, to say what is wrong and where.
				err := validateFieldsMap(fv, nil)
				if err == nil {
					err = errInvalidFieldsV1
				}
				manager, _ := m["manager"].(string)
				return nil, &EntryError{Index: i, Manager: manager, Err: fmt.Errorf("fieldsV1: %w", err)}
			}
			validated = true
		}
		mf, err := entryFromMap(m)
		if err != nil {
			manager, _ := m["manager"].(string)
			return nil, &EntryError{Index: i, Manager: manager, Err: err}
		}
		if isMap {
			mf.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		}
		e, err := decodeEntry(i, mf, validated)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// rawEntries returns obj's managedFields list, unstructured.
func rawEntries(obj *unstructured.Unstructured) ([]any, error) {
	// No copy: a large object's managedFields is most of it, and it is only read.
	val, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields")
	if err != nil {
		return nil, fmt.Errorf("metadata.managedFields: %w", err)
	}
	raw, isSlice := val.([]any)
	if found && val != nil && !isSlice {
		return nil, fmt.Errorf("metadata.managedFields: want a list, got %T", val)
	}
	if !found || len(raw) == 0 {
		return nil, ErrNoManagedFields
	}
	return raw, nil
}

func rawEntry(i int, r any) (map[string]any, error) {
	m, ok := r.(map[string]any)
	if !ok {
		return nil, &EntryError{Index: i, Err: fmt.Errorf("want an object, got %T", r)}
	}
	return m, nil
}

// DecodeEntry decodes one typed managedFields entry.
func DecodeEntry(index int, mf metav1.ManagedFieldsEntry) (Entry, error) {
	return decodeEntry(index, mf, false)
}

func decodeEntry(index int, mf metav1.ManagedFieldsEntry, validated bool) (Entry, error) {
	e, err := entryHeader(index, mf)
	if err != nil {
		return Entry{}, err
	}
	e.fields = fieldpath.NewSet()
	if mf.FieldsV1 != nil && len(mf.FieldsV1.Raw) > 0 {
		if err := e.fields.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			if verr := ValidateFieldsV1(mf.FieldsV1.Raw); verr != nil {
				// The careful check names the bad key and where it is.
				err = verr
			}
			return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("fieldsV1: %w", err)}
		}
		if !validated {
			if err := checkDecoded(mf.FieldsV1.Raw, e.fields); err != nil {
				return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("fieldsV1: %w", err)}
			}
		}
	}
	return e, nil
}

// entryHeader checks and copies everything but the FieldsV1 of an entry.
func entryHeader(index int, mf metav1.ManagedFieldsEntry) (Entry, error) {
	e := Entry{
		Index:       index,
		Manager:     mf.Manager,
		Operation:   mf.Operation,
		APIVersion:  mf.APIVersion,
		Subresource: mf.Subresource,
	}
	if mf.Time != nil {
		e.Time = mf.Time.Time
	}
	switch mf.Operation {
	case metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate:
	default:
		return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("operation %q: want Apply or Update", mf.Operation)}
	}
	if mf.FieldsType != "" && mf.FieldsType != "FieldsV1" {
		return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("fieldsType %q: only FieldsV1 is defined", mf.FieldsType)}
	}
	return e, nil
}

// appendFieldsJSON writes a FieldsV1 map as JSON, keys sorted. ok is false
// when the map is not a FieldsV1 trie (a value that is not a map, a key of
// a type fieldpath.Set.FromJSON would drop); FromJSON checks the rest.
func appendFieldsJSON(b []byte, m map[string]any) (out []byte, ok bool) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		if k != "." && !knownKeyType(k) {
			return b, false
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonvalue.AppendString(b, k)
		b = append(b, ':')
		sub, isMap := m[k].(map[string]any)
		if !isMap {
			return b, false
		}
		if b, ok = appendFieldsJSON(b, sub); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// entryFromMap reads an unstructured managedFields entry (all but
// fieldsV1, which the caller handles when it is a map). It is the
// unstructured converter's job done without reflection, which matters when
// thousands of objects are read.
func entryFromMap(m map[string]any) (metav1.ManagedFieldsEntry, error) {
	var mf metav1.ManagedFieldsEntry
	str := func(key string) (string, error) {
		v, found := m[key]
		if !found || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: want a string, got %T", key, v)
		}
		return s, nil
	}
	var err error
	var op, ts string
	for _, f := range []struct {
		key string
		dst *string
	}{{"manager", &mf.Manager}, {"operation", &op}, {"apiVersion", &mf.APIVersion}, {"subresource", &mf.Subresource}, {"fieldsType", &mf.FieldsType}, {"time", &ts}} {
		if *f.dst, err = str(f.key); err != nil {
			return mf, err
		}
	}
	mf.Operation = metav1.ManagedFieldsOperationType(op)
	if ts != "" {
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return mf, fmt.Errorf("time %q: %w", ts, err)
		}
		mt := metav1.NewTime(t)
		mf.Time = &mt
	}
	if v, found := m["fieldsV1"]; found && v != nil {
		if _, isMap := v.(map[string]any); !isMap {
			return mf, fmt.Errorf("fieldsV1: want an object, got %T", v)
		}
	}
	return mf, nil
}
