package positions

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxDepth bounds how deep Lists nest inside Lists: only a cycle of
// aliases (which sigs.k8s.io/yaml refuses) goes deeper.
const maxDepth = 32

// errAliases is a document whose aliases make it hold more objects than
// it has bytes: an alias bomb, or a List that holds itself.
var errAliases = errors.New("its aliases expand to more objects than the document holds; write the objects out")

// document is one YAML document being turned into Objects.
type document struct {
	lines    lineMap
	first    int
	template *Template
	// budget is how many more objects the document may yield.
	budget  int
	objects []*Object
}

// expand adds the object n is, or the objects of the List n is, as
// pkg/objects does: a mapping whose kind ends in "List" and that has an
// items list is replaced by its items (each at its index, recursively).
func (d *document) expand(n *yaml.Node, item, depth int) error {
	if depth > maxDepth {
		return errAliases
	}
	m, _ := deref(n, nil)
	if items := listItems(m); items != nil {
		for i, it := range items.Content {
			if err := d.expand(it, i, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	d.budget--
	if d.budget < 0 {
		return errAliases
	}
	o := &Object{
		Start:    d.lines.pos(n),
		Document: d.first,
		Item:     item,
		Template: d.template,
		root:     n,
		lines:    d.lines,
	}
	if t := kustomizeOrigin(m); t != nil {
		o.Template = t
	}
	d.objects = append(d.objects, o)
	return nil
}

// listItems returns the items of m when m is a List, else nil.
func listItems(m *yaml.Node) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	_, kind, _ := field(m, "kind")
	if kind == nil {
		return nil
	}
	kind, _ = deref(kind, nil)
	s, ok := scalarValue(kind).(string)
	if !ok || !strings.HasSuffix(s, "List") {
		return nil
	}
	_, items, _ := field(m, "items")
	if items == nil {
		return nil
	}
	items, _ = deref(items, nil)
	if items.Kind != yaml.SequenceNode {
		return nil
	}
	return items
}

// deref follows an alias to the node it names. via is the outermost alias
// followed so far: the first alias on the way is the one kept, since that
// is where the object holds what the anchor defines.
func deref(n, via *yaml.Node) (*yaml.Node, *yaml.Node) {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxDepth; i++ {
		if via == nil {
			via = n
		}
		n = n.Alias
	}
	return n, via
}

// isNull reports whether n is a document that holds no object (null, ~,
// or nothing), which pkg/objects skips.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
