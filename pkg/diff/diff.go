package diff

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// Op is what happened to a field.
type Op string

// The operations.
const (
	Added    Op = "add"
	Removed  Op = "remove"
	Modified Op = "change"
)

// Change is one changed field.
type Change struct {
	// Path is the field, as the API server prints it.
	Path fieldpath.Path `json:"-"`
	// Op says whether the field appeared, disappeared or changed.
	Op Op `json:"op"`
	// Old and New are the values: scalars as they are (string, int64,
	// float64, bool or nil for JSON null), maps and lists as a short
	// Summary ("{3 fields}", "[2 items]"). Old is unset for Added, New for
	// Removed.
	Old any `json:"old,omitempty"`
	New any `json:"new,omitempty"`
}

// Summary stands for a map or list value in a Change.
type Summary string

// PathString returns the path as the API server prints it.
func (c Change) PathString() string { return c.Path.String() }

// String renders the change compactly: ".spec.replicas 3->5",
// ".metadata.labels.tier +web", ".spec.paused -true".
func (c Change) String() string {
	p := c.Path.String()
	switch c.Op {
	case Added:
		return p + " +" + FormatValue(c.New)
	case Removed:
		return p + " -" + FormatValue(c.Old)
	default:
		return p + " " + FormatValue(c.Old) + "->" + FormatValue(c.New)
	}
}

// maxValue bounds a rendered value: a changed certificate or script is shown
// by its start and length, not in full.
const maxValue = 40

// FormatValue renders a change value compactly: strings bare unless empty or
// ambiguous, long strings cut.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case Summary:
		return string(x)
	case string:
		s := x
		if len(s) > maxValue {
			cut := maxValue
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = fmt.Sprintf("%s...(%dB)", s[:cut], len(x))
		}
		if s == "" || strings.ContainsAny(s, " \t\n\",") || strings.Contains(s, "->") {
			return strconv.Quote(s)
		}
		return s
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// Options tune a comparison.
type Options struct {
	// Ignore lists fields that are not compared, as paths of plain field
	// names: {"metadata", "managedFields"}.
	Ignore [][]string
	// ListKeys are the item fields that key lists of objects, tried in
	// order; nil means DefaultListKeys.
	ListKeys []string
}

// DefaultListKeys key containers, ports, volumes, env and conditions.
var DefaultListKeys = []string{"name", "type"}

// Differ compares objects with fixed Options. It is safe for concurrent use.
type Differ struct {
	ignore   *ignoreNode
	listKeys []string
}

type ignoreNode struct {
	leaf     bool
	children map[string]*ignoreNode
}

// New returns a Differ.
func New(opts Options) *Differ {
	d := &Differ{ignore: &ignoreNode{}, listKeys: opts.ListKeys}
	if d.listKeys == nil {
		d.listKeys = DefaultListKeys
	}
	for _, p := range opts.Ignore {
		n := d.ignore
		for _, f := range p {
			if n.children == nil {
				n.children = map[string]*ignoreNode{}
			}
			c := n.children[f]
			if c == nil {
				c = &ignoreNode{}
				n.children[f] = c
			}
			n = c
		}
		n.leaf = true
	}
	return d
}

// Objects returns the changes from old to new, in path order. Either may be
// nil (everything added or removed).
func Objects(old, new map[string]any) []Change { return New(Options{}).Objects(old, new) }

// Objects returns the changes from old to new, in path order.
func (d *Differ) Objects(old, new map[string]any) []Change {
	var out []Change
	d.maps(&out, nil, d.ignore, old, new)
	return out
}

func (d *Differ) maps(out *[]Change, path fieldpath.Path, ign *ignoreNode, old, new map[string]any) {
	// Most of an object is unchanged between two versions: compare without
	// allocating first, and walk in order only where something differs.
	if ign == nil && jsonvalue.Equal(jsonvalue.Numeric, old, new) {
		return
	}
	var keys []string
	for k, ov := range old {
		if ign != nil {
			if c := ign.children[k]; c != nil {
				// Ignored (managedFields, which changes on every write and
				// is large): skip; holding ignored fields: walk.
				if !c.leaf {
					keys = append(keys, k)
				}
				continue
			}
		}
		if nv, ok := new[k]; !ok || !jsonvalue.Equal(jsonvalue.Numeric, ov, nv) {
			keys = append(keys, k)
		}
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			if ign != nil {
				if c := ign.children[k]; c != nil && c.leaf {
					continue
				}
			}
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		var child *ignoreNode
		if ign != nil {
			child = ign.children[k]
			if child != nil && child.leaf {
				continue
			}
		}
		name := k
		p := appendPath(path, fieldpath.PathElement{FieldName: &name})
		ov, inOld := old[k]
		nv, inNew := new[k]
		switch {
		case !inOld && smallMap(nv):
			d.maps(out, p, nil, nil, nv.(map[string]any))
		case !inOld:
			*out = append(*out, Change{Path: p, Op: Added, New: describe(nv)})
		case !inNew && smallMap(ov):
			d.maps(out, p, nil, ov.(map[string]any), nil)
		case !inNew:
			*out = append(*out, Change{Path: p, Op: Removed, Old: describe(ov)})
		default:
			d.values(out, p, child, ov, nv)
		}
	}
}

// maxExpanded is the size up to which an added or removed tree of maps (a
// first label, a first annotation) is shown scalar by scalar rather than as
// "{N fields}".
const maxExpanded = 4

func smallMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return false
	}
	n := 0
	return countLeaves(m, &n)
}

// countLeaves counts the scalars of a tree of maps into n; false when the
// tree holds a list or an empty map, or more than maxExpanded scalars.
func countLeaves(m map[string]any, n *int) bool {
	for _, x := range m {
		switch y := x.(type) {
		case []any:
			return false
		case map[string]any:
			if len(y) == 0 || !countLeaves(y, n) {
				return false
			}
		default:
			*n++
			if *n > maxExpanded {
				return false
			}
		}
	}
	return true
}

func (d *Differ) values(out *[]Change, path fieldpath.Path, ign *ignoreNode, old, new any) {
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			d.maps(out, path, ign, o, n)
			return
		}
	case []any:
		if n, ok := new.([]any); ok {
			d.lists(out, path, o, n)
			return
		}
	default:
		if jsonvalue.Equal(jsonvalue.Numeric, old, new) {
			return
		}
	}
	*out = append(*out, Change{Path: path, Op: Modified, Old: describe(old), New: describe(new)})
}

func (d *Differ) lists(out *[]Change, path fieldpath.Path, old, new []any) {
	if key := d.listKey(old, new); key != "" {
		d.keyedLists(out, path, key, old, new)
		return
	}
	for i := 0; i < len(old) || i < len(new); i++ {
		p := appendPath(path, fieldpath.PathElement{Index: intPtr(i)})
		switch {
		case i >= len(old):
			*out = append(*out, Change{Path: p, Op: Added, New: describe(new[i])})
		case i >= len(new):
			*out = append(*out, Change{Path: p, Op: Removed, Old: describe(old[i])})
		default:
			d.values(out, p, nil, old[i], new[i])
		}
	}
}

// listKey returns the item field that keys both lists, or "": every item
// must be an object with a unique string value for it.
func (d *Differ) listKey(old, new []any) string {
	if len(old)+len(new) == 0 {
		return ""
	}
	for _, k := range d.listKeys {
		if uniqueKey(old, k) && uniqueKey(new, k) {
			return k
		}
	}
	return ""
}

func uniqueKey(items []any, key string) bool {
	seen := make(map[string]struct{}, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		s, ok := m[key].(string)
		if !ok {
			return false
		}
		if _, dup := seen[s]; dup {
			return false
		}
		seen[s] = struct{}{}
	}
	return true
}

func (d *Differ) keyedLists(out *[]Change, path fieldpath.Path, key string, old, new []any) {
	byKey := make(map[string]map[string]any, len(old))
	for _, it := range old {
		m := it.(map[string]any)
		byKey[m[key].(string)] = m
	}
	type item struct {
		k        string
		old, new map[string]any
	}
	items := make([]item, 0, len(old)+len(new))
	inNew := make(map[string]struct{}, len(new))
	for _, it := range new {
		m := it.(map[string]any)
		k := m[key].(string)
		inNew[k] = struct{}{}
		items = append(items, item{k: k, old: byKey[k], new: m})
	}
	for _, it := range old {
		m := it.(map[string]any)
		if _, ok := inNew[m[key].(string)]; !ok {
			items = append(items, item{k: m[key].(string), old: m})
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].k < items[j].k })
	for _, it := range items {
		fl := value.FieldList{{Name: key, Value: value.NewValueInterface(it.k)}}
		p := appendPath(path, fieldpath.PathElement{Key: &fl})
		switch {
		case it.old == nil:
			*out = append(*out, Change{Path: p, Op: Added, New: describe(it.new)})
		case it.new == nil:
			*out = append(*out, Change{Path: p, Op: Removed, Old: describe(it.old)})
		default:
			d.maps(out, p, nil, it.old, it.new)
		}
	}
}

// describe returns a scalar as it is and a map or list as a Summary.
func describe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			return Summary("{1 field}")
		}
		return Summary(fmt.Sprintf("{%d fields}", len(x)))
	case []any:
		if len(x) == 1 {
			return Summary("[1 item]")
		}
		return Summary(fmt.Sprintf("[%d items]", len(x)))
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	default:
		return v
	}
}

// appendPath copies, so that sibling paths never share a backing array.
func appendPath(p fieldpath.Path, e fieldpath.PathElement) fieldpath.Path {
	out := make(fieldpath.Path, len(p)+1)
	copy(out, p)
	out[len(p)] = e
	return out
}

func intPtr(i int) *int { return &i }

// HasPrefix reports whether path starts with the plain field names prefix:
// HasPrefix(.status.conditions[type="Ready"].status, "status") is true.
func HasPrefix(path fieldpath.Path, prefix ...string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i, f := range prefix {
		if path[i].FieldName == nil || *path[i].FieldName != f {
			return false
		}
	}
	return true
}

// MarshalJSON writes the change with its path as a string:
// {"path":".spec.replicas","op":"change","old":3,"new":5}.
func (c Change) MarshalJSON() ([]byte, error) {
	type wire struct {
		Path string `json:"path"`
		Op   Op     `json:"op"`
		Old  any    `json:"old,omitempty"`
		New  any    `json:"new,omitempty"`
	}
	return json.Marshal(wire{Path: c.Path.String(), Op: c.Op, Old: c.Old, New: c.New})
}
