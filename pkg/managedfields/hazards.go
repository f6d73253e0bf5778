package managedfields

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// HazardType names a kind of ownership hazard.
type HazardType string

// The hazards Analyze reports.
const (
	// HazardApplyUpdateShared: a field co-owned by an Apply manager and an
	// Update manager. The Update manager does not know about the apply; the
	// applier's next apply that changes the value conflicts, and one that
	// drops the field leaves it behind, still owned by the Update manager.
	HazardApplyUpdateShared HazardType = "ApplyUpdateShared"
	// HazardClientSideApplyMigration: fields owned by both
	// kubectl-client-side-apply and a server-side-apply manager, the trap of
	// moving from kubectl apply to kubectl apply --server-side: fields removed
	// from the manifest are kept because the client-side-apply entry still
	// owns them.
	HazardClientSideApplyMigration HazardType = "ClientSideApplyMigration"
	// HazardAncientChanges: an ancient-changes entry. The object had more than
	// ten Update managers, so the API server merged the oldest into one
	// entry: who wrote those fields is lost.
	HazardAncientChanges HazardType = "AncientChanges"
	// HazardGenericManager: a manager name that hides the real writer
	// (Go-http-client, unknown or empty), because the client did not set a
	// user agent or field manager.
	HazardGenericManager HazardType = "GenericManager"
	// HazardStaleFields: an entry owns fields the object no longer has.
	HazardStaleFields HazardType = "StaleFields"
	// HazardDuplicateEntry: two entries with the same manager, operation,
	// apiVersion (Update) and subresource. The API server's field manager
	// keeps only the last; the fields only the earlier one lists are owned
	// by no one when it checks for conflicts (see Ownership).
	HazardDuplicateEntry HazardType = "DuplicateEntry"
)

// ClientSideApplyManager is the field manager of kubectl's client-side apply.
const ClientSideApplyManager = "kubectl-client-side-apply"

// AncientChangesManager is the manager name of the entry the API server
// merges its oldest Update managers into.
const AncientChangesManager = "ancient-changes"

// Hazard is one ownership hazard found in an object.
type Hazard struct {
	Type HazardType `json:"type"`
	// Owners are the entries involved, ordered by entry index.
	Owners []Owner `json:"owners"`
	// Fields are the fields involved, in tree order (empty for hazards
	// about a whole entry).
	Fields []fieldpath.Path `json:"-"`
	// Message says what is wrong and what to do about it.
	Message string `json:"message"`
}

// FieldStrings returns the hazard's fields as kubectl-style paths.
func (h Hazard) FieldStrings() []string {
	out := make([]string, len(h.Fields))
	for i, f := range h.Fields {
		out[i] = PathString(f)
	}
	return out
}

// Managers returns the distinct manager names involved.
func (h Hazard) Managers() []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range h.Owners {
		if !seen[o.Manager] {
			seen[o.Manager] = true
			out = append(out, o.Manager)
		}
	}
	return out
}

// genericManagers are manager names that say nothing about the writer.
var genericManagers = map[string]bool{"": true, "unknown": true, "Go-http-client": true}

// IsGenericManager reports whether name hides the real writer.
func IsGenericManager(name string) bool {
	return genericManagers[name] || strings.HasPrefix(name, "Go-http-client/")
}

// Hazards analyzes the ownership. Stale fields are reported only when the
// ownership was attached to its object (Build, or Attach). Hazards come in
// a stable order: by type, then by the entries involved.
func (o *Ownership) Hazards() []Hazard {
	// The hazards about fields: one per pair of entries sharing fields, one
	// per entry owning fields the object lost, in the order first met. The
	// maps are passed around rather than held in a struct, so that they
	// stay on the stack.
	pairs := map[pairKey]*Hazard{}
	var pairOrder []pairKey
	stale := map[int]*Hazard{}
	var staleOrder []int
	o.root.Walk(func(n *Node) bool {
		if n == o.root {
			return true
		}
		if !n.Present && o.attached {
			// Report the topmost absent node only: its children are gone with it.
			addStale(stale, &staleOrder, n)
			return false
		}
		addShared(pairs, &pairOrder, n)
		return true
	})
	out := make([]Hazard, 0, len(pairOrder)+len(staleOrder))
	for _, k := range pairOrder {
		out = append(out, withMessage(pairs[k]))
	}
	for _, idx := range staleOrder {
		out = append(out, withMessage(stale[idx]))
	}
	out = append(out, o.entryHazards()...)
	sort.SliceStable(out, func(i, j int) bool { return hazardRank[out[i].Type] < hazardRank[out[j].Type] })
	return out
}

// pairKey names the hazard of an Apply entry a and an Update entry u.
type pairKey struct {
	t    HazardType
	a, u int
}

// addShared records n's field for every pair of an Apply and an Update
// owner.
func addShared(pairs map[pairKey]*Hazard, order *[]pairKey, n *Node) {
	for _, a := range n.Owners {
		if !a.IsApply() {
			continue
		}
		for _, u := range n.Owners {
			if u.IsApply() {
				continue
			}
			t := HazardApplyUpdateShared
			if u.Manager == ClientSideApplyManager {
				t = HazardClientSideApplyMigration
			}
			k := pairKey{t, a.Entry, u.Entry}
			h := pairs[k]
			if h == nil {
				h = &Hazard{Type: t, Owners: sortOwners([]Owner{a, u})}
				pairs[k] = h
				*order = append(*order, k)
			}
			h.Fields = append(h.Fields, n.Path())
		}
	}
}

// addStale records every owned field of the absent subtree n for its
// owners (entry index -> hazard).
func addStale(stale map[int]*Hazard, order *[]int, n *Node) {
	n.Walk(func(c *Node) bool {
		for _, ow := range c.Owners {
			h := stale[ow.Entry]
			if h == nil {
				h = &Hazard{Type: HazardStaleFields, Owners: []Owner{ow}}
				stale[ow.Entry] = h
				*order = append(*order, ow.Entry)
			}
			h.Fields = append(h.Fields, c.Path())
		}
		return true
	})
}

func withMessage(h *Hazard) Hazard {
	h.Message = fieldsMessage(*h)
	return *h
}

// entryHazards are the hazards of whole entries: ancient-changes, generic
// manager names and duplicate identities.
func (o *Ownership) entryHazards() []Hazard {
	var out []Hazard
	for i, e := range o.entries {
		if j, ok := o.shadowed[i]; ok {
			out = append(out, duplicateHazard(e, o.entries[j]))
		}
		if e.Manager == AncientChangesManager {
			out = append(out, Hazard{Type: HazardAncientChanges, Owners: []Owner{ownerOf(e)},
				Message: fmt.Sprintf("entry %d is %q: more than ten Update managers wrote this object, so the oldest were merged and who wrote %d field(s) is lost; set a distinct field manager per writer", e.Index, e.Manager, e.FieldCount())})
		}
		if IsGenericManager(e.Manager) {
			name := quote(e.Manager)
			if e.Manager == "" {
				name = "an empty manager name"
			}
			out = append(out, Hazard{Type: HazardGenericManager, Owners: []Owner{ownerOf(e)},
				Message: fmt.Sprintf("entry %d has %s, which hides the real writer of %d field(s): set a user agent or --field-manager in that client", e.Index, name, e.FieldCount())})
		}
	}
	return out
}

// duplicateHazard says that the field manager ignores entry e for last,
// and which of e's fields no one owns because of it.
func duplicateHazard(e, last Entry) Hazard {
	lost := e.Fields().Difference(last.Fields())
	n, first := 0, ""
	lost.Iterate(func(p fieldpath.Path) {
		if n == 0 {
			first = PathString(p)
		}
		n++
	})
	msg := fmt.Sprintf("entries %d and %d are both %s: the API server's field manager keeps only the last (entry %d), and the next write to the object drops entry %d", e.Index, last.Index, quote(last.ID()), last.Index, e.Index)
	if n > 0 {
		msg += fmt.Sprintf("; %d field(s) only entry %d lists (%s", n, e.Index, first)
		if n > 1 {
			msg += fmt.Sprintf(" and %d more", n-1)
		}
		msg += ") are owned by no one: another manager's apply takes them without a conflict"
	}
	return Hazard{Type: HazardDuplicateEntry, Owners: []Owner{ownerOf(e), ownerOf(last)}, Message: msg}
}

var hazardRank = map[HazardType]int{
	HazardClientSideApplyMigration: 0,
	HazardApplyUpdateShared:        1,
	HazardStaleFields:              2,
	HazardDuplicateEntry:           3,
	HazardAncientChanges:           4,
	HazardGenericManager:           5,
}

// fieldsMessage says what a hazard about fields means, for its fields.
func fieldsMessage(h Hazard) string {
	var a, u Owner
	for _, o := range h.Owners {
		if o.IsApply() {
			a = o
		} else {
			u = o
		}
	}
	switch h.Type {
	case HazardClientSideApplyMigration:
		return fmt.Sprintf("%s: %d field(s) owned by both client-side apply (%s) and server-side apply (%s): fields you remove from the manifest stay in the object, because %s still owns them; migrate with kubectl apply --server-side once, or drop the %s entry; kubectl rv predict -f MANIFEST --method apply --field-manager %s shows what the move conflicts on, moves and deletes",
			fieldsSummary(h.Fields), len(h.Fields), quote(u.Manager), quote(a.Manager), quote(u.Manager), quote(u.Manager), predictArg(a.Manager))
	case HazardApplyUpdateShared:
		return fmt.Sprintf("%s: %d field(s) owned by both Apply manager %s and Update manager %s: the next apply that changes them conflicts, and one that drops them leaves them owned by %s",
			fieldsSummary(h.Fields), len(h.Fields), quote(a.Manager), quote(u.Manager), quote(u.Manager))
	case HazardStaleFields:
		ow := h.Owners[0]
		return fmt.Sprintf("%s: %s owns %d field(s) the object does not have: a later apply or update may recreate or fight over them; re-apply from that manager to clear them",
			fieldsSummary(h.Fields), quote(ow.Manager), len(h.Fields))
	}
	return h.Message
}

func sortOwners(os []Owner) []Owner {
	sort.Slice(os, func(i, j int) bool { return os[i].Entry < os[j].Entry })
	return os
}

// fieldsSummary names the first field and how many more there are.
func fieldsSummary(fs []fieldpath.Path) string {
	if len(fs) == 0 {
		return ""
	}
	s := PathString(fs[0])
	if len(fs) > 1 {
		s += fmt.Sprintf(" and %d more", len(fs)-1)
	}
	return s
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// MarshalJSON writes the fields as kubectl-style path strings.
func (h Hazard) MarshalJSON() ([]byte, error) {
	type wire struct {
		Type    HazardType `json:"type"`
		Owners  []Owner    `json:"owners"`
		Fields  []string   `json:"fields,omitempty"`
		Message string     `json:"message"`
	}
	return json.Marshal(wire{Type: h.Type, Owners: h.Owners, Fields: h.FieldStrings(), Message: h.Message})
}

// predictArg is a manager name as a shell word in a suggested command:
// as it is when it needs no quoting, else single-quoted.
func predictArg(m string) string {
	if m != "" && strings.Trim(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") == "" {
		return m
	}
	return "'" + strings.ReplaceAll(m, "'", `'\''`) + "'"
}
