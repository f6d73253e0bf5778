package positions

import "go.yaml.in/yaml/v3"

// field finds the field name of the mapping m as sigs.k8s.io/yaml (through
// go.yaml.in/yaml/v2) decodes it: keys are taken in order, a later one
// replacing an earlier, and a merge key (<<) sets every field of the
// mappings it names, the first of a list of them winning. via is the
// alias of a merge key the field came through, or nil.
func field(m *yaml.Node, name string) (key, val, via *yaml.Node) {
	f := finder{name: name, seen: map[*yaml.Node]found{}}
	r := f.mapping(m)
	return r.key, r.val, r.via
}

type found struct{ key, val, via *yaml.Node }

// finder looks one name up through merge keys, each mapping once: a
// mapping merged many times (or into itself) costs one look.
type finder struct {
	name string
	seen map[*yaml.Node]found
}

func (f *finder) mapping(m *yaml.Node) found {
	if r, ok := f.seen[m]; ok {
		return r
	}
	f.seen[m] = found{} // a mapping that merges itself finds nothing there
	var r found
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if isMerge(k) {
			if got := f.merged(v, 0); got.key != nil {
				r = got
			}
			continue
		}
		if s, ok := keyString(k); ok && s == f.name {
			r = found{key: k, val: v}
		}
	}
	f.seen[m] = r
	return r
}

// merged looks the name up in the value of a merge key: a mapping, an
// alias of one, or a list of those where the first that has it wins.
func (f *finder) merged(v *yaml.Node, depth int) found {
	switch v.Kind {
	case yaml.MappingNode:
		return f.mapping(v)
	case yaml.AliasNode:
		m, _ := deref(v, nil)
		if m.Kind != yaml.MappingNode {
			return found{}
		}
		r := f.mapping(m)
		if r.key != nil {
			r.via = v // the outermost alias is where the object has it
		}
		return r
	case yaml.SequenceNode:
		if depth > 0 {
			return found{}
		}
		var r found
		for i := len(v.Content) - 1; i >= 0; i-- {
			if got := f.merged(v.Content[i], depth+1); got.key != nil {
				r = got
			}
		}
		return r
	}
	return found{}
}

// isMerge reports whether k is the merge key "<<", as yaml/v2 sees it: a
// plain << or one tagged !!merge.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Style&quoted == 0 || k.Tag == "!!merge")
}
