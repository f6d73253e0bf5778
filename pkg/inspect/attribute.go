package inspect

import (
	"errors"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// Writer names the manager that wrote a version of an object, or says why it
// cannot be known.
type Writer struct {
	// Manager is the field manager; empty when unknown.
	Manager string `json:"manager,omitempty"`
	// Operation is Apply or Update.
	Operation string `json:"operation,omitempty"`
	// Subresource is "status" for /status writes, else empty.
	Subresource string `json:"subresource,omitempty"`
	// Candidates are the managers that may have written it, when several did
	// (after a gap) or the evidence does not pick one.
	Candidates []string `json:"candidates,omitempty"`
	// Reason says why Manager is unknown, or how it was inferred when the
	// managedFields time did not move.
	Reason string `json:"reason,omitempty"`
}

// Known reports whether the writer is known.
func (w Writer) Known() bool { return w.Manager != "" }

// String renders the writer for a table: "kubectl", "kcm (status)",
// "? several writers: a, b".
func (w Writer) String() string {
	if !w.Known() {
		if w.Reason == "" {
			return "?"
		}
		return "? " + w.Reason
	}
	if w.Subresource != "" {
		return w.Manager + " (" + w.Subresource + ")"
	}
	return w.Manager
}

// The reasons a writer is unknown.
const (
	ReasonFirstSight      = "first sight"
	ReasonNoManagedFields = "no managedFields"
	ReasonDeleted         = "deletes are not recorded in managedFields"
	ReasonTimeNotMoved    = "time not moved"
	ReasonSoleOwner       = "time not moved; sole owner of the changed fields"
	ReasonStatusWriter    = "time not moved; the only /status writer"
	ReasonSeveral         = "several candidates"
	ReasonNoFieldChange   = "no field changed"
)

// Attribute finds the writer of the version whose managedFields are cur,
// given the previous version's prev and the paths that changed between
// them.
//
// The writer is the entry whose time moved, or that is new, between prev and
// cur: the API server moves an entry's time only for the manager of the
// request (when it adds, changes or removes a field). When no time moved
// (times have one-second precision, so a manager writing twice in a second
// leaves it), the entry whose field set grew is the writer, since a write
// takes the fields it changes from other managers. When neither tells, the
// entry that alone owns every changed field is the writer (marked with
// ReasonSoleOwner); a field the write removed counts as owned by the entries
// that owned it before, since no entry owns it after (the deployment
// controller's status write that removes .status.updatedReplicas). When
// every changed field is under .status, the only /status entry is the
// writer (ReasonStatusWriter): on a type with a status subresource nothing
// else can write them. Otherwise the writer is unknown and the reason says
// why.
//
// Example: prev has kubectl-client-side-apply (time 10:00:00, owns
// .spec.replicas) and cur has kubectl-client-side-apply (10:00:00, no longer
// owns it) and scaler (new, owns .spec.replicas): the writer is scaler.
func Attribute(prev, cur []managedfields.Entry, changed []fieldpath.Path) Writer {
	return attribute(viewsOf(prev), viewsOf(cur), changed)
}

func attribute(prev, cur []*entryView, changed []fieldpath.Path) Writer {
	if len(cur) == 0 {
		return Writer{Reason: ReasonNoManagedFields}
	}
	// Objects have a handful of entries: a linear search beats a map.
	prevOf := func(id string) *entryView {
		for _, p := range prev {
			if p.id == id {
				return p
			}
		}
		return nil
	}
	var moved, same []*entryView
	for _, e := range cur {
		p := prevOf(e.id)
		if p == nil || !p.meta.Time.Equal(e.meta.Time) {
			moved = append(moved, e)
		} else {
			same = append(same, e)
		}
	}
	if len(moved) == 1 {
		return writerOf(moved[0], "")
	}
	if len(moved) > 1 {
		if owners := owningAll(moved, changed, nil); len(owners) == 1 {
			return writerOf(owners[0], "")
		}
		return Writer{Reason: ReasonSeveral, Candidates: managerNames(moved)}
	}
	var grew []*entryView
	for _, e := range same {
		cs, err1 := e.set()
		ps, err2 := prevOf(e.id).set()
		if err1 != nil || err2 != nil {
			return Writer{Reason: "invalid managedFields: " + errors.Join(err1, err2).Error()}
		}
		if !cs.Difference(ps).Empty() {
			grew = append(grew, e)
		}
	}
	switch len(grew) {
	case 1:
		return writerOf(grew[0], "")
	case 0:
	default:
		if owners := owningAll(grew, changed, nil); len(owners) == 1 {
			return writerOf(owners[0], "")
		}
		return Writer{Reason: ReasonSeveral, Candidates: managerNames(grew)}
	}
	if len(changed) == 0 {
		return Writer{Reason: ReasonNoFieldChange}
	}
	if owners := owningAll(cur, changed, prevOf); len(owners) == 1 {
		return writerOf(owners[0], ReasonSoleOwner)
	}
	if w := statusWriter(cur, changed); w != nil {
		return writerOf(w, ReasonStatusWriter)
	}
	return Writer{Reason: ReasonTimeNotMoved}
}

// statusWriter returns the only /status entry when every changed path is
// under .status: on a type with a status subresource nothing else can
// have written them.
func statusWriter(cur []*entryView, changed []fieldpath.Path) *entryView {
	for _, p := range changed {
		if len(p) == 0 || p[0].FieldName == nil || *p[0].FieldName != "status" {
			return nil
		}
	}
	var w *entryView
	for _, e := range cur {
		if e.meta.Subresource == "status" {
			if w != nil {
				return nil
			}
			w = e
		}
	}
	return w
}

// attributeCreate finds the creator of an object created while watched: its
// only entry; with several entries the creator cannot be told apart.
func attributeCreate(cur []*entryView) Writer {
	if len(cur) == 0 {
		return Writer{Reason: ReasonNoManagedFields}
	}
	if len(cur) == 1 {
		return writerOf(cur[0], "")
	}
	return Writer{Reason: ReasonSeveral, Candidates: managerNames(cur)}
}

func writerOf(e *entryView, reason string) Writer {
	return Writer{Manager: e.meta.Manager, Operation: string(e.meta.Operation), Subresource: e.meta.Subresource, Reason: reason}
}

func managerNames(es []*entryView) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range es {
		n := e.meta.Manager
		if e.meta.Subresource != "" {
			n += " (" + e.meta.Subresource + ")"
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// owningAll returns the entries that own every path in changed. With
// before, an entry also owns a path its previous version (before(id))
// owned: a field the write removed is owned by no entry after it.
func owningAll(es []*entryView, changed []fieldpath.Path, before func(id string) *entryView) []*entryView {
	if len(changed) == 0 {
		return nil
	}
	var out []*entryView
	for _, e := range es {
		set, err := e.set()
		if err != nil {
			continue
		}
		var old *fieldpath.Set
		if before != nil {
			if p := before(e.id); p != nil {
				old, _ = p.set()
			}
		}
		all := true
		for _, p := range changed {
			if !Owns(set, p) && (old == nil || !Owns(old, p)) {
				all = false
				break
			}
		}
		if all {
			out = append(out, e)
		}
	}
	return out
}

// Owns reports whether set owns path: path itself, something below it (a
// map or list item added or removed as a whole), or an ancestor owned as a
// leaf (atomic lists and maps are owned whole). An ancestor that is a member
// with children, as `f:annotations: {".": {}, "f:a": {}}` decodes, only
// says that the manager created the map: it does not own its other keys.
func Owns(set *fieldpath.Set, path fieldpath.Path) bool {
	sub := set
	for i, pe := range path {
		children := sub.WithPrefix(pe)
		last := i == len(path)-1
		if sub.Members.Has(pe) && (last || children.Empty()) {
			return true
		}
		if last || children.Empty() {
			return !children.Empty()
		}
		sub = children
	}
	return false
}
