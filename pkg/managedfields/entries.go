package managedfields

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
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
	// Fields is the decoded FieldsV1 set, never nil.
	Fields *fieldpath.Set
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
	raw, found, err := unstructured.NestedSlice(obj.Object, "metadata", "managedFields")
	if err != nil {
		return nil, fmt.Errorf("metadata.managedFields: %w", err)
	}
	if !found || len(raw) == 0 {
		return nil, ErrNoManagedFields
	}
	entries := make([]Entry, 0, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, &EntryError{Index: i, Err: fmt.Errorf("want an object, got %T", r)}
		}
		var mf metav1.ManagedFieldsEntry
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &mf); err != nil {
			return nil, &EntryError{Index: i, Err: err}
		}
		e, err := DecodeEntry(i, mf)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	return entries, nil
}

// DecodeEntry decodes one typed managedFields entry.
func DecodeEntry(index int, mf metav1.ManagedFieldsEntry) (Entry, error) {
	e := Entry{
		Index:       index,
		Manager:     mf.Manager,
		Operation:   mf.Operation,
		APIVersion:  mf.APIVersion,
		Subresource: mf.Subresource,
		Fields:      fieldpath.NewSet(),
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
	if mf.FieldsV1 != nil && len(mf.FieldsV1.Raw) > 0 {
		if err := ValidateFieldsV1(mf.FieldsV1.Raw); err != nil {
			return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("fieldsV1: %w", err)}
		}
		if err := e.Fields.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return Entry{}, &EntryError{Index: index, Manager: mf.Manager, Err: fmt.Errorf("fieldsV1: %w", err)}
		}
	}
	return e, nil
}
