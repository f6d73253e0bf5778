package managedfields

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Owner is one managedFields entry that owns a field.
type Owner struct {
	// Entry is the entry's index in metadata.managedFields.
	Entry       int                               `json:"entry"`
	Manager     string                            `json:"manager"`
	Operation   metav1.ManagedFieldsOperationType `json:"operation"`
	APIVersion  string                            `json:"apiVersion,omitempty"`
	Subresource string                            `json:"subresource,omitempty"`
	// Time is the entry's last write; zero when the server recorded none.
	Time time.Time `json:"time,omitzero"`
}

// IsApply reports whether the owner wrote with server-side apply.
func (o Owner) IsApply() bool { return o.Operation == metav1.ManagedFieldsOperationApply }

func ownerOf(e Entry) Owner {
	return Owner{Entry: e.Index, Manager: e.Manager, Operation: e.Operation, APIVersion: e.APIVersion, Subresource: e.Subresource, Time: e.Time}
}

// Node is one field of the ownership tree: a field of a map, an item of a
// keyed list, a set item or an indexed list item. Only nodes that are owned
// themselves or lead to owned nodes exist in the tree.
//
// A node is owned by the entries whose FieldsV1 has it as a member: a leaf
// (f:replicas: {}), or a list item marked with "." (the manager put the item
// there). Ownership is not inherited: owning .spec.template.spec.containers[name="nginx"]
// does not mean owning its .image.
type Node struct {
	// Element selects this node in its parent; zero for the root.
	Element fieldpath.PathElement
	// Owners are the entries owning this node, ordered by entry index.
	Owners []Owner
	// Children are sorted: field names by name, list items in the object's
	// order (after Attach), then by path element.
	Children []*Node
	// Present says whether the object has this node; set by Attach. Nodes of
	// an ownership built without an object are taken as present.
	Present bool
	// ItemIndex is this list item's position in the object's list, or -1
	// (field names, or items the object does not have).
	ItemIndex int
	// Context marks, in a filtered tree, a node above the selected field:
	// it is there to lead to the field, its own owners are left out.
	Context bool

	// parent is nil for the root; depth is the length of the node's path.
	parent *Node
	depth  int

	index map[elemKey]*Node
	// raw is the FieldsV1 key this node was first read from, and byRaw
	// indexes large nodes' children by it: the same keys recur in every
	// entry, and reading a key is most of the cost of reading a trie.
	raw   string
	byRaw map[string]*Node
}

// Owned reports whether any entry owns the node itself.
func (n *Node) Owned() bool { return len(n.Owners) > 0 }

// Path returns the node's full path from the object's root.
func (n *Node) Path() fieldpath.Path {
	p := make(fieldpath.Path, n.depth)
	for c := n; c.depth > 0; c = c.parent {
		p[c.depth-1] = c.Element
	}
	return p
}

// Child returns the child selected by pe, or nil.
func (n *Node) Child(pe fieldpath.PathElement) *Node {
	if n.index != nil {
		return n.index[elementKey(pe)]
	}
	for _, c := range n.Children {
		if c.Element.Equals(pe) {
			return c
		}
	}
	return nil
}

// Walk calls fn for n and its descendants, depth first, in order; it skips
// a node's children when fn returns false.
func (n *Node) Walk(fn func(*Node) bool) {
	if !fn(n) {
		return
	}
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// SameOwners reports whether a and b have the same owning entries.
func SameOwners(a, b []Owner) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Entry != b[i].Entry {
			return false
		}
	}
	return true
}

// smallNode is how many children a node holds before it indexes them.
const smallNode = 8

// arena hands out nodes in blocks: a large object has thousands of nodes,
// and one allocation per node is much of the cost of building the tree.
type arena struct {
	nodes []Node
}

func (a *arena) node() *Node {
	if a == nil {
		return &Node{}
	}
	if len(a.nodes) == cap(a.nodes) {
		// Blocks grow with the object: most objects are small.
		a.nodes = make([]Node, 0, min(max(2*cap(a.nodes), 32), 512))
	}
	a.nodes = a.nodes[:len(a.nodes)+1]
	return &a.nodes[len(a.nodes)-1]
}

func (n *Node) child(pe fieldpath.PathElement, a *arena) *Node {
	var k elemKey
	if n.index != nil {
		k = elementKey(pe)
		if c, ok := n.index[k]; ok {
			return c
		}
	} else {
		for _, c := range n.Children {
			if c.Element.Equals(pe) {
				return c
			}
		}
	}
	c := a.node()
	*c = Node{Element: pe, parent: n, depth: n.depth + 1, Present: true, ItemIndex: -1}
	n.Children = append(n.Children, c)
	switch {
	case n.index != nil:
		n.index[k] = c
	case len(n.Children) > smallNode:
		n.index = make(map[elemKey]*Node, 2*len(n.Children))
		for _, ch := range n.Children {
			n.index[elementKey(ch.Element)] = ch
		}
	}
	return c
}

// Ownership is the decoded ownership of one object: every managedFields
// entry merged into one tree of field path -> owners.
//
// Two entries with the same identity (manager, operation, apiVersion for an
// Update, subresource) are one owner to the API server's field manager,
// which decodes managedFields into a map by that identity: the last entry
// wins and the earlier one is ignored. The server can store such a pair (a
// no-op /scale patch on a custom resource leaves one), so the tree leaves
// the earlier entry out as the field manager does, and Hazards reports the
// pair (HazardDuplicateEntry). For example, with
//
//	0: kubectl Update /scale  f:spec.f:replicas
//	1: kubectl Update /scale  (no fields)
//
// .spec.replicas has no owner: an apply by another manager that sets it
// does not conflict.
type Ownership struct {
	entries []Entry
	// shadowed maps the position of each entry the field manager ignores
	// to the position of the later entry with its identity.
	shadowed map[int]int
	root     *Node
	attached bool
}

// NewOwnership builds the ownership tree of entries (from Entries).
func NewOwnership(entries []Entry) *Ownership {
	o := newOwnership(entries)
	o.root.Walk(func(n *Node) bool {
		sortNodes(n.Children)
		return true
	})
	return o
}

// newOwnership builds the tree without ordering it (Attach orders it).
func newOwnership(entries []Entry) *Ownership {
	o := &Ownership{entries: entries, shadowed: shadowedEntries(entries), root: &Node{Present: true, ItemIndex: -1}}
	a := &arena{}
	for i, e := range entries {
		if _, ok := o.shadowed[i]; ok {
			continue
		}
		owner := ownerOf(e)
		mergeSet(o.root, e.Fields(), owner, a)
	}
	return o
}

// shadowedEntries maps the position of each entry that a later entry with
// the same identity overrides (see Ownership) to the position of the last
// one; nil when there is none, as on almost every object. Objects have few
// entries (at most ten Updates and the appliers), so pairs are compared
// rather than hashed.
func shadowedEntries(entries []Entry) map[int]int {
	var out map[int]int
	for i := range entries {
		for j := len(entries) - 1; j > i; j-- {
			if sameIdentity(entries[i], entries[j]) {
				if out == nil {
					out = map[int]int{}
				}
				out[i] = j
				break
			}
		}
	}
	return out
}

// sameIdentity reports whether the field manager takes a and b for one
// manager: Entry.ID without building the strings.
func sameIdentity(a, b Entry) bool {
	return a.Manager == b.Manager && a.Operation == b.Operation && a.Subresource == b.Subresource &&
		(a.IsApply() || a.APIVersion == b.APIVersion)
}

func mergeSet(n *Node, s *fieldpath.Set, owner Owner, a *arena) {
	if s == nil {
		return
	}
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		c := n.child(pe, a)
		c.Owners = insertOwner(c.Owners, owner)
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		sub, ok := s.Children.Get(pe)
		if ok {
			mergeSet(n.child(pe, a), sub, owner, a)
		}
	})
}

func insertOwner(owners []Owner, o Owner) []Owner {
	if len(owners) == 0 {
		// Most fields have one or two owners.
		return append(make([]Owner, 0, 2), o)
	}
	i := sort.Search(len(owners), func(i int) bool { return owners[i].Entry >= o.Entry })
	if i < len(owners) && owners[i].Entry == o.Entry {
		return owners
	}
	return slices.Insert(owners, i, o)
}

func sortNodes(ns []*Node) {
	if len(ns) < 2 || slices.IsSortedFunc(ns, compareNodes) {
		return
	}
	slices.SortFunc(ns, compareNodes)
}

// compareNodes orders list items the object has by their place in it, then
// everything else by path element. Siblings' elements differ, so the order
// is total (two elements may select the same item: [0] and [name="a"]).
func compareNodes(a, b *Node) int {
	switch {
	case a.ItemIndex >= 0 && b.ItemIndex >= 0 && a.ItemIndex != b.ItemIndex:
		return a.ItemIndex - b.ItemIndex
	case a.ItemIndex >= 0 && b.ItemIndex < 0:
		return -1
	case b.ItemIndex >= 0 && a.ItemIndex < 0:
		return 1
	}
	return a.Element.Compare(b.Element)
}

// Entries returns the entries the ownership was built from.
func (o *Ownership) Entries() []Entry { return o.entries }

// Root returns the tree's root, standing for the whole object.
func (o *Ownership) Root() *Node { return o.root }

// Node returns the node at p, or nil when no entry owns p or anything below it.
func (o *Ownership) Node(p fieldpath.Path) *Node {
	n := o.root
	for _, pe := range p {
		if n = n.Child(pe); n == nil {
			return nil
		}
	}
	return n
}

// Owners returns the entries owning exactly p (not its parents, not its
// children), ordered by entry index. These are the managers a server-side
// apply changing p's value would conflict with (unless it is one of them).
func (o *Ownership) Owners(p fieldpath.Path) []Owner {
	if n := o.Node(p); n != nil {
		return slices.Clone(n.Owners)
	}
	return nil
}

// OwnersWithin returns the entries owning p or anything below it, ordered
// by entry index.
func (o *Ownership) OwnersWithin(p fieldpath.Path) []Owner {
	n := o.Node(p)
	if n == nil {
		return nil
	}
	var out []Owner
	n.Walk(func(c *Node) bool {
		for _, ow := range c.Owners {
			out = insertOwner(out, ow)
		}
		return true
	})
	return out
}

// OwnedCount returns how many nodes are owned: len(Fields()), without the list.
func (o *Ownership) OwnedCount() int {
	n := 0
	o.root.Walk(func(c *Node) bool {
		if c.Owned() {
			n++
		}
		return true
	})
	return n
}

// Fields returns every owned node, depth first in tree order.
func (o *Ownership) Fields() []*Node {
	var out []*Node
	o.root.Walk(func(n *Node) bool {
		if n.Owned() {
			out = append(out, n)
		}
		return true
	})
	return out
}

// Attach matches the tree against the object obj (an unstructured object's
// content): it sets every node's Present and ItemIndex and orders list items
// as the object does. A keyed item k:{"containerPort":80,"protocol":"TCP"}
// is the list element whose key fields all have those values; a set item
// v:"x" is the element equal to "x"; i:2 is the third element.
func (o *Ownership) Attach(obj map[string]any) {
	o.attached = true
	attach(o.root, obj, true)
}

func attach(n *Node, v any, present bool) {
	n.Present = present
	var index *listIndex
	l, isList := v.([]any)
	for _, c := range n.Children {
		var (
			child any
			idx   = -1
			ok    bool
		)
		indexed := false
		if present && isList && (c.Element.Key != nil || c.Element.Value != nil) {
			if index == nil {
				index = newListIndex(l)
			}
			child, idx, ok, indexed = index.find(c.Element)
		}
		if !indexed {
			child, idx, ok = resolve(v, c.Element, present)
		}
		c.ItemIndex = idx
		attach(c, child, ok)
	}
	sortNodes(n.Children)
}

// resolve finds the child of v that pe selects.
func resolve(v any, pe fieldpath.PathElement, parentPresent bool) (child any, index int, ok bool) {
	if !parentPresent {
		return nil, -1, false
	}
	switch {
	case pe.FieldName != nil:
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, -1, false
		}
		c, found := m[*pe.FieldName]
		return c, -1, found
	case pe.Key != nil:
		l, isList := v.([]any)
		if !isList {
			return nil, -1, false
		}
		for i, it := range l {
			if matchesKey(it, *pe.Key) {
				return it, i, true
			}
		}
	case pe.Value != nil:
		l, isList := v.([]any)
		if !isList {
			return nil, -1, false
		}
		for i, it := range l {
			if equalValue(it, *pe.Value) {
				return it, i, true
			}
		}
	case pe.Index != nil:
		l, isList := v.([]any)
		if !isList || *pe.Index < 0 || *pe.Index >= len(l) {
			return nil, -1, false
		}
		return l[*pe.Index], *pe.Index, true
	}
	return nil, -1, false
}

func matchesKey(item any, key value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, found := m[f.Name]
		if !found || !equalValue(v, f.Value) {
			return false
		}
	}
	return true
}

// equalValue compares an unstructured value with a structured-merge-diff
// value; numbers compare by value whether decoded as int or float.
func equalValue(v any, want value.Value) (eq bool) {
	defer func() {
		// value.NewValueInterface panics on types unstructured content
		// cannot hold; such a value equals nothing.
		if recover() != nil {
			eq = false
		}
	}()
	got := value.NewValueInterface(normalize(v))
	if got.IsInt() && want.IsFloat() {
		return float64(got.AsInt()) == want.AsFloat()
	}
	if got.IsFloat() && want.IsInt() {
		return got.AsFloat() == float64(want.AsInt())
	}
	return value.Equals(got, want)
}

func normalize(v any) any {
	switch t := v.(type) {
	case int:
		return int64(t)
	case int32:
		return int64(t)
	case float32:
		return float64(t)
	}
	return v
}

// String describes the owner for messages: "kubectl (Apply)",
// "kube-controller-manager (Update apps/v1, status)".
func (o Owner) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q (%s", o.Manager, o.Operation)
	if !o.IsApply() && o.APIVersion != "" {
		b.WriteString(" " + o.APIVersion)
	}
	if o.Subresource != "" {
		b.WriteString(", " + o.Subresource)
	}
	b.WriteString(")")
	return b.String()
}

// EachField calls fn for every owned node, depth first in tree order (the
// nodes Fields returns), with its path as Path.String writes it and, when
// elements is true, as PathElements writes it. Both are built as the walk
// descends, each element written once, which matters for large objects.
// The elements slice is reused: copy it to keep it.
func (o *Ownership) EachField(elements bool, fn func(n *Node, path string, elems []string)) {
	var (
		stack []string
		buf   []byte
		walk  func(n *Node)
	)
	walk = func(n *Node) {
		if n.Owned() {
			fn(n, string(buf), stack)
		}
		for _, c := range n.Children {
			if elements {
				stack = append(stack, elementKeyString(c))
			}
			mark := len(buf)
			buf = AppendElementString(buf, c.Element)
			walk(c)
			buf = buf[:mark]
			if elements {
				stack = stack[:len(stack)-1]
			}
		}
	}
	walk(o.root)
}

// elementKeyString is PathElements for one node's element: its FieldsV1 key.
func elementKeyString(n *Node) string {
	if n.Element.FieldName != nil {
		return "f:" + *n.Element.FieldName
	}
	return PathElements(fieldpath.Path{n.Element})[0]
}

// AppendElementString appends what pe.String() returns ([name="nginx"],
// .image), without fmt for field names and items with one string key.
func AppendElementString(b []byte, pe fieldpath.PathElement) []byte {
	switch {
	case pe.FieldName != nil:
		return append(append(b, '.'), *pe.FieldName...)
	case pe.Key != nil && len(*pe.Key) == 1 && (*pe.Key)[0].Value != nil && (*pe.Key)[0].Value.IsString():
		f := (*pe.Key)[0]
		b = append(append(b, '['), f.Name...)
		b = strconv.AppendQuote(append(b, '='), f.Value.AsString())
		return append(b, ']')
	}
	return append(b, pe.String()...)
}

// PathString is p.String(), written with AppendElementString.
func PathString(p fieldpath.Path) string {
	var b []byte
	for _, pe := range p {
		b = AppendElementString(b, pe)
	}
	return string(b)
}
