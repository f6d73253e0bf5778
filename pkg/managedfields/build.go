package managedfields

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Build decodes obj's managedFields and attaches the ownership to obj.
//
// It reads every entry's FieldsV1 trie straight into the ownership tree,
// without decoding it into a fieldpath.Set first (Entry.Fields decodes that
// on demand): the result is the tree NewOwnership builds from Entries, at
// a fraction of the cost for large objects. Errors are those of Entries.
func Build(obj *unstructured.Unstructured) (*Ownership, error) {
	raw, err := rawEntries(obj)
	if err != nil {
		return nil, err
	}
	o := &Ownership{entries: make([]Entry, 0, len(raw)), root: &Node{Present: true, ItemIndex: -1}}
	b := &trieReader{}
	for i, r := range raw {
		e, ok := b.entry(o.root, i, r)
		if !ok {
			// Entries checks the same things in the same order, carefully,
			// and says what is wrong and where.
			return nil, entriesError(obj)
		}
		o.entries = append(o.entries, e)
	}
	if shadowedEntries(o.entries) != nil {
		// Rare: the tree read above holds an entry the field manager
		// ignores (see Ownership); build it again without.
		o = newOwnership(o.entries)
	}
	o.Attach(obj.Object)
	return o, nil
}

// entriesError returns the error Entries reports for obj, which Build found
// invalid.
func entriesError(obj *unstructured.Unstructured) error {
	if _, err := Entries(obj); err != nil {
		return err
	}
	return fmt.Errorf("metadata.managedFields: %w", errInvalidFieldsV1)
}

// trieReader merges FieldsV1 tries into an ownership tree.
type trieReader struct {
	a arena
	// Most fields have one or two owners: nodes share one owner list per
	// entry and per pair of entries. Owner lists are never changed in
	// place (insertOwner copies a full one), so sharing them is safe.
	singles [][]Owner
	pairs   map[[2]int][]Owner
	// names are the field names read so far, by key ("f:image"); path
	// elements share them, and nothing writes through them.
	names map[string]*string
}

// addOwner returns owners with o added, and whether it was not there yet.
func (b *trieReader) addOwner(owners []Owner, o Owner) ([]Owner, bool) {
	switch {
	case len(owners) == 0:
		for len(b.singles) <= o.Entry {
			b.singles = append(b.singles, nil)
		}
		if b.singles[o.Entry] == nil {
			b.singles[o.Entry] = []Owner{o}
		}
		return b.singles[o.Entry], true
	case len(owners) == 1 && owners[0].Entry != o.Entry:
		first, second := owners[0], o
		if second.Entry < first.Entry {
			first, second = second, first
		}
		k := [2]int{first.Entry, second.Entry}
		if p, ok := b.pairs[k]; ok {
			return p, true
		}
		if b.pairs == nil {
			b.pairs = map[[2]int][]Owner{}
		}
		p := []Owner{first, second}
		b.pairs[k] = p
		return p, true
	}
	n := len(owners)
	owners = insertOwner(owners, o)
	return owners, len(owners) > n
}

// entry reads managedFields[i] and merges its fields into root; ok is
// false when the entry is invalid in any way.
func (b *trieReader) entry(root *Node, i int, r any) (Entry, bool) {
	m, err := rawEntry(i, r)
	if err != nil {
		return Entry{}, false
	}
	mf, err := entryFromMap(m)
	if err != nil {
		return Entry{}, false
	}
	e, err := entryHeader(i, mf)
	if err != nil {
		return Entry{}, false
	}
	fv, _ := m["fieldsV1"].(map[string]any)
	n, _, ok := b.merge(root, fv, ownerOf(e))
	if !ok {
		return Entry{}, false
	}
	e.lazy = &lazyFields{src: fv, size: n}
	return e, true
}

// merge adds owner to the nodes trie m marks as members under n, the way
// fieldpath.Set.FromJSON reads a trie: a key is a member when its object
// is empty or has ".", and has children when it has other keys. It returns
// how many members it added and whether m has "."; ok is false when m is
// not a valid trie.
func (b *trieReader) merge(n *Node, m map[string]any, owner Owner) (added int, dot, ok bool) {
	if len(m) > smallNode && n.index == nil && len(n.Children) == 0 {
		// A large list: size its indexes once instead of growing them.
		n.index = make(map[elemKey]*Node, len(m))
		n.byRaw = make(map[string]*Node, len(m))
	}
	for k, v := range m {
		sub, isMap := v.(map[string]any)
		if !isMap {
			return 0, false, false
		}
		if k == "." {
			// FromJSON ignores what is under "."; Entries checks it is a trie.
			if len(sub) > 0 && validateFieldsMapIn(sub, nil, false, false) != nil {
				return 0, false, false
			}
			dot = true
			continue
		}
		if !knownKeyType(k) {
			return 0, false, false
		}
		c := b.child(n, k)
		if c == nil {
			return 0, false, false
		}
		member := len(sub) == 0
		if !member {
			more, subDot, ok := b.merge(c, sub, owner)
			if !ok {
				return 0, false, false
			}
			added += more
			member = subDot
		}
		if member {
			var isNew bool
			if c.Owners, isNew = b.addOwner(c.Owners, owner); isNew {
				added++
			}
		}
	}
	return added, dot, true
}

// child returns n's child for the FieldsV1 key k, creating it; nil when k
// is not a path element.
func (b *trieReader) child(n *Node, k string) *Node {
	if n.byRaw != nil {
		if c, ok := n.byRaw[k]; ok {
			return c
		}
	} else {
		for _, c := range n.Children {
			if c.raw == k {
				return c
			}
		}
	}
	var pe fieldpath.PathElement
	if name, ok := b.names[k]; ok {
		pe = fieldpath.PathElement{FieldName: name}
	} else {
		var err error
		if pe, err = readElement(k); err != nil {
			return nil
		}
		if pe.FieldName != nil {
			// Field names recur (f:image in every container): share them.
			if b.names == nil {
				b.names = map[string]*string{}
			}
			b.names[k] = pe.FieldName
		}
	}
	c := n.child(pe, &b.a)
	if c.raw == "" {
		c.raw = k
	}
	if n.index != nil {
		// As many children as n.index needs: index them by key too.
		if n.byRaw == nil {
			n.byRaw = make(map[string]*Node, 2*len(n.Children))
			for _, ch := range n.Children {
				if ch.raw != "" {
					n.byRaw[ch.raw] = ch
				}
			}
		}
		n.byRaw[k] = c
	}
	return c
}

// readElement is fieldpath.DeserializePathElement, reading the most common
// keyed item, k:{"name":"value"} with plain ASCII strings, without a JSON
// parser.
func readElement(k string) (fieldpath.PathElement, error) {
	if name, val, ok := simpleKey(k); ok {
		return fieldpath.PathElement{Key: &value.FieldList{{Name: name, Value: value.NewValueInterface(val)}}}, nil
	}
	return fieldpath.DeserializePathElement(k)
}

// simpleKey splits k:{"NAME":"VALUE"}; ok is false for anything else,
// including strings JSON would unescape or that are not printable ASCII.
func simpleKey(k string) (name, val string, ok bool) {
	const prefix, suffix, sep = `k:{"`, `"}`, `":"`
	if !strings.HasPrefix(k, prefix) || !strings.HasSuffix(k, suffix) || len(k) < len(prefix)+len(sep)+len(suffix) {
		return "", "", false
	}
	body := k[len(prefix) : len(k)-len(suffix)]
	i := strings.Index(body, sep)
	if i < 0 {
		return "", "", false
	}
	name, val = body[:i], body[i+len(sep):]
	return name, val, plainASCII(name) && plainASCII(val)
}

// plainASCII reports whether s is printable ASCII that JSON writes as is.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
