package managedfields

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Filter selects owned fields. The zero Filter selects everything.
type Filter struct {
	// Manager keeps the fields this manager owns (alone or shared).
	Manager string
	// Field keeps this field and everything below it; nil keeps all.
	Field fieldpath.Path
	// Shared keeps the fields with more than one owning entry.
	Shared bool
}

// IsZero reports whether the filter selects everything.
func (f Filter) IsZero() bool { return f.Manager == "" && f.Field == nil && !f.Shared }

func (f Filter) keepsOwners(owners []Owner) bool {
	if len(owners) == 0 {
		return false
	}
	if f.Shared && len(owners) < 2 {
		return false
	}
	if f.Manager != "" {
		for _, o := range owners {
			if o.Manager == f.Manager {
				return true
			}
		}
		return false
	}
	return true
}

// KeepsEntry reports whether an entry passes the manager filter.
func (f Filter) KeepsEntry(e Entry) bool { return f.Manager == "" || e.Manager == f.Manager }

// MatchElement reports whether a path element a user wrote selects the
// element got of an ownership path. It is looser than equality so that
// people can write what they mean: a key selector may name only some of the
// item's keys ([containerPort=8080] selects [containerPort=8080,protocol="TCP"]),
// and an unquoted value matches a string of the same text ([name=80]
// selects [name="80"]).
func MatchElement(want, got fieldpath.PathElement) bool {
	switch {
	case want.FieldName != nil:
		return got.FieldName != nil && *want.FieldName == *got.FieldName
	case want.Index != nil:
		return got.Index != nil && *want.Index == *got.Index
	case want.Value != nil:
		return got.Value != nil && looseEqual(*want.Value, *got.Value)
	case want.Key != nil:
		if got.Key == nil {
			return false
		}
		for _, wf := range *want.Key {
			found := false
			for _, gf := range *got.Key {
				if gf.Name == wf.Name && looseEqual(wf.Value, gf.Value) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}

func looseEqual(want, got value.Value) bool {
	if value.Equals(want, got) {
		return true
	}
	if want.IsInt() && got.IsFloat() {
		return float64(want.AsInt()) == got.AsFloat()
	}
	if want.IsFloat() && got.IsInt() {
		return want.AsFloat() == float64(got.AsInt())
	}
	if got.IsString() && !want.IsString() {
		return value.ToString(want) == got.AsString()
	}
	return false
}

// Filtered returns a copy of the ownership holding only the owned fields
// f selects and the nodes leading to them. Entries are kept as they are.
func (o *Ownership) Filtered(f Filter) *Ownership {
	if f.IsZero() {
		return o
	}
	if f.Field != nil {
		f.Field = o.Resolve(f.Field)
	}
	out := &Ownership{entries: o.entries, attached: o.attached}
	out.root = filterNode(o.root, f, true)
	if out.root == nil {
		out.root = &Node{Present: true, ItemIndex: -1}
	}
	return out
}

// filterNode copies n's part of the filtered tree; along says whether n's
// path matches f.Field as far as both go.
func filterNode(n *Node, f Filter, along bool) *Node {
	inField := f.Field == nil || (along && n.depth >= len(f.Field))
	onTheWay := f.Field != nil && along && n.depth < len(f.Field)
	if !inField && !onTheWay {
		return nil
	}
	c := &Node{Element: n.Element, depth: n.depth, Present: n.Present, ItemIndex: n.ItemIndex, Context: !inField}
	if inField && f.keepsOwners(n.Owners) {
		c.Owners = n.Owners
	}
	for _, ch := range n.Children {
		chAlong := along && (ch.depth > len(f.Field) || MatchElement(f.Field[ch.depth-1], ch.Element))
		if k := filterNode(ch, f, chAlong); k != nil {
			k.parent = c
			c.Children = append(c.Children, k)
		}
	}
	if !c.Owned() && len(c.Children) == 0 && n.depth > 0 {
		return nil
	}
	if len(c.Children) > smallNode {
		c.index = make(map[elemKey]*Node, len(c.Children))
		for _, ch := range c.Children {
			c.index[elementKey(ch.Element)] = ch
		}
	}
	return c
}

// FilterHazards keeps the hazards that concern what f selects: the
// hazard's fields are narrowed to the selected ones (a hazard about fields
// none of which is selected is dropped), and with a manager filter the
// hazard must involve that manager. Entry-wide hazards (ancient-changes,
// generic names) are kept when their entry owns a selected field.
func FilterHazards(hs []Hazard, f Filter, filtered *Ownership) []Hazard {
	if f.IsZero() {
		return hs
	}
	owning := map[int]bool{}
	filtered.root.Walk(func(n *Node) bool {
		for _, ow := range n.Owners {
			owning[ow.Entry] = true
		}
		return true
	})
	var out []Hazard
	for _, h := range hs {
		if f.Manager != "" {
			involved := false
			for _, ow := range h.Owners {
				involved = involved || ow.Manager == f.Manager
			}
			if !involved {
				continue
			}
		}
		if len(h.Fields) == 0 {
			keep := false
			for _, ow := range h.Owners {
				keep = keep || owning[ow.Entry]
			}
			if keep {
				out = append(out, h)
			}
			continue
		}
		var fields []fieldpath.Path
		for _, p := range h.Fields {
			if n := filtered.Node(p); n != nil && n.Owned() {
				fields = append(fields, p)
			}
		}
		if len(fields) == 0 {
			continue
		}
		if len(fields) != len(h.Fields) {
			h.Fields = fields
			h.Message = fieldsMessage(h)
		}
		out = append(out, h)
	}
	return out
}

// Resolve reads a path the way the tree can answer it. The API server's
// path format does not escape dots in field names, so a path copied from a
// conflict message or from the table view, such as
// .metadata.annotations.deployment.kubernetes.io/revision, parses into too
// many field names; Resolve joins consecutive field names with dots where
// that is what the tree holds. Paths it cannot place come back unchanged.
func (o *Ownership) Resolve(p fieldpath.Path) fieldpath.Path {
	if out, ok := resolveFrom(o.root, p); ok {
		return out
	}
	return p
}

func resolveFrom(n *Node, p fieldpath.Path) (fieldpath.Path, bool) {
	if len(p) == 0 {
		return fieldpath.Path{}, true
	}
	name := ""
	for j := 0; j < len(p); j++ {
		pe := p[0]
		if j > 0 {
			if p[j].FieldName == nil {
				break
			}
			name += "." + *p[j].FieldName
			pe = fieldpath.FieldNameElement(name)
		} else if p[0].FieldName != nil {
			name = *p[0].FieldName
		}
		for _, c := range n.Children {
			if !MatchElement(pe, c.Element) {
				continue
			}
			if rest, ok := resolveFrom(c, p[j+1:]); ok {
				return append(fieldpath.Path{pe}, rest...), true
			}
		}
		if p[0].FieldName == nil {
			break
		}
	}
	return nil, false
}
