package managedfields

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// ErrInvalidPath is wrapped by every error ParsePath returns.
var ErrInvalidPath = errors.New("invalid field path")

// ParsePath parses a kubectl-style field path into a fieldpath.Path. It
// accepts what fieldpath.Path.String prints (and so what the API server
// prints in conflict messages) plus a few conveniences:
//
//	.spec.replicas                                   field names
//	spec.replicas                                    the leading dot is optional
//	.spec.template.spec.containers[name=nginx].image a keyed list item, unquoted
//	.spec.template.spec.containers[name="nginx"]     ... or quoted (Go or JSON quoting)
//	.spec.ports[port=80,protocol="TCP"]              several keys, in any order
//	.metadata.finalizers[="example.com/x"]           a set item (by value)
//	.spec.args[0]                                    a list item by index
//	.metadata.labels["app.kubernetes.io/name"]       a field name with dots
//	.metadata.labels.app\.kubernetes\.io/name        ... or with escaped dots
//
// Unquoted values in keys and set items are read as JSON scalars when they
// are one (80, true, null, 1.5) and as strings otherwise; quote a value to
// force a string ([name="80"]).
func ParsePath(s string) (fieldpath.Path, error) {
	p := &pathParser{s: s}
	path, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("%w %q: %s", ErrInvalidPath, s, err)
	}
	return path, nil
}

type pathParser struct {
	s   string
	pos int
}

func (p *pathParser) parse() (fieldpath.Path, error) {
	if strings.TrimSpace(p.s) == "" {
		return nil, errors.New("the path is empty")
	}
	var path fieldpath.Path
	first := true
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '.':
			p.pos++
			name, err := p.name()
			if err != nil {
				return nil, err
			}
			path = append(path, fieldpath.FieldNameElement(name))
		case c == '[':
			pe, err := p.bracket()
			if err != nil {
				return nil, err
			}
			path = append(path, pe)
		case first:
			name, err := p.name()
			if err != nil {
				return nil, err
			}
			path = append(path, fieldpath.FieldNameElement(name))
		default:
			return nil, fmt.Errorf("unexpected %q at offset %d: want . or [", c, p.pos)
		}
		first = false
	}
	return path, nil
}

// name reads a field name up to the next unescaped . or [.
func (p *pathParser) name() (string, error) {
	var b strings.Builder
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '\\' && p.pos+1 < len(p.s) {
			b.WriteByte(p.s[p.pos+1])
			p.pos += 2
			continue
		}
		if c == '.' || c == '[' {
			break
		}
		if c == ']' {
			return "", fmt.Errorf("unexpected ] at offset %d", p.pos)
		}
		b.WriteByte(c)
		p.pos++
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("empty field name at offset %d", start)
	}
	return b.String(), nil
}

// bracket reads [...]: a quoted field name, an index, =value or key=value,...
func (p *pathParser) bracket() (fieldpath.PathElement, error) {
	open := p.pos
	p.pos++ // [
	p.skipSpace()
	if p.pos >= len(p.s) {
		return fieldpath.PathElement{}, fmt.Errorf("unclosed [ at offset %d", open)
	}
	switch c := p.s[p.pos]; {
	case c == '"' || c == '\'':
		return p.quotedName(open)
	case c == '=':
		return p.setItem(open)
	case c >= '0' && c <= '9':
		if pe, ok, err := p.index(open); ok {
			return pe, err
		}
	}
	return p.keys(open)
}

// quotedName reads "name"] or 'name'].
func (p *pathParser) quotedName(open int) (fieldpath.PathElement, error) {
	name, err := p.quoted()
	if err != nil {
		return fieldpath.PathElement{}, err
	}
	if err := p.close(open); err != nil {
		return fieldpath.PathElement{}, err
	}
	return fieldpath.FieldNameElement(name), nil
}

// setItem reads =value].
func (p *pathParser) setItem(open int) (fieldpath.PathElement, error) {
	p.pos++ // =
	v, err := p.scalar()
	if err != nil {
		return fieldpath.PathElement{}, err
	}
	if err := p.close(open); err != nil {
		return fieldpath.PathElement{}, err
	}
	return fieldpath.ValueElement(v), nil
}

// index reads digits]; ok is false, and nothing is consumed, when the digits
// begin a key name instead ([0x=1]).
func (p *pathParser) index(open int) (pe fieldpath.PathElement, ok bool, err error) {
	end := p.pos
	for end < len(p.s) && p.s[end] >= '0' && p.s[end] <= '9' {
		end++
	}
	if !strings.HasPrefix(strings.TrimLeft(p.s[end:], " "), "]") {
		return fieldpath.PathElement{}, false, nil
	}
	i, err := strconv.Atoi(p.s[p.pos:end])
	if err != nil {
		return fieldpath.PathElement{}, true, fmt.Errorf("index %q at offset %d: %v", p.s[p.pos:end], p.pos, err)
	}
	p.pos = end
	if err := p.close(open); err != nil {
		return fieldpath.PathElement{}, true, err
	}
	return fieldpath.IndexElement(i), true, nil
}

// keys reads key=value,...] into a key element, its fields sorted.
func (p *pathParser) keys(open int) (fieldpath.PathElement, error) {
	var fields value.FieldList
	for {
		p.skipSpace()
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] != '=' && p.s[p.pos] != ']' && p.s[p.pos] != ',' {
			p.pos++
		}
		key := strings.TrimSpace(p.s[start:p.pos])
		if p.pos >= len(p.s) || p.s[p.pos] != '=' {
			return fieldpath.PathElement{}, fmt.Errorf("list selector at offset %d: want [key=value], [=value], [\"name\"] or [index]", open)
		}
		if key == "" {
			return fieldpath.PathElement{}, fmt.Errorf("empty key name at offset %d", start)
		}
		for _, f := range fields {
			if f.Name == key {
				return fieldpath.PathElement{}, fmt.Errorf("key %q given twice at offset %d", key, start)
			}
		}
		p.pos++ // =
		v, err := p.scalar()
		if err != nil {
			return fieldpath.PathElement{}, err
		}
		fields = append(fields, value.Field{Name: key, Value: v})
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if err := p.close(open); err != nil {
			return fieldpath.PathElement{}, err
		}
		fields.Sort()
		return fieldpath.KeyElement(fields...), nil
	}
}

func (p *pathParser) close(open int) error {
	p.skipSpace()
	if p.pos >= len(p.s) || p.s[p.pos] != ']' {
		return fmt.Errorf("unclosed [ at offset %d", open)
	}
	p.pos++
	return nil
}

func (p *pathParser) skipSpace() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

// quoted reads a double-quoted (Go or JSON escapes) or single-quoted string.
func (p *pathParser) quoted() (string, error) {
	start := p.pos
	q := p.s[p.pos]
	p.pos++
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '\\' && q == '"' {
			p.pos += 2
			continue
		}
		if c == q {
			p.pos++
			lit := p.s[start:p.pos]
			if q == '\'' {
				return lit[1 : len(lit)-1], nil
			}
			s, err := strconv.Unquote(lit)
			if err != nil {
				return "", fmt.Errorf("bad quoted string %s at offset %d", lit, start)
			}
			return s, nil
		}
		p.pos++
	}
	return "", fmt.Errorf("unterminated string at offset %d", start)
}

// scalar reads a quoted string or a bare token up to , or ].
func (p *pathParser) scalar() (value.Value, error) {
	p.skipSpace()
	if p.pos < len(p.s) && (p.s[p.pos] == '"' || p.s[p.pos] == '\'') {
		s, err := p.quoted()
		if err != nil {
			return nil, err
		}
		return value.NewValueInterface(s), nil
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != ',' && p.s[p.pos] != ']' {
		p.pos++
	}
	tok := strings.TrimSpace(p.s[start:p.pos])
	if tok == "" {
		return nil, fmt.Errorf("empty value at offset %d (quote it: \"\")", start)
	}
	return bareValue(tok), nil
}

// bareValue reads an unquoted token as an int, float, bool or null when it
// is one, else as a string.
func bareValue(tok string) value.Value {
	switch tok {
	case "true":
		return value.NewValueInterface(true)
	case "false":
		return value.NewValueInterface(false)
	case "null":
		return value.NewValueInterface(nil)
	}
	if i, err := strconv.ParseInt(tok, 10, 64); err == nil {
		return value.NewValueInterface(i)
	}
	if f, err := strconv.ParseFloat(tok, 64); err == nil && isNumberLike(tok) {
		return value.NewValueInterface(f)
	}
	return value.NewValueInterface(tok)
}

// isNumberLike rejects words ParseFloat accepts but JSON does not (Inf, NaN).
func isNumberLike(tok string) bool {
	c := tok[0]
	return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9')
}

// ShortPathString prints p in the short form that ParsePath reads back and
// scenario files use: no leading dot, field names bare unless they hold
// . [ ] or \ (then ["app.kubernetes.io/name"]), key and set values bare
// unless they would read back as another value or break the syntax.
//
//	spec.template.spec.containers[name=app].image
//	spec.ports[port=80,protocol=TCP]
//	metadata.labels["app.kubernetes.io/name"]
//	metadata.finalizers[="80"]
func ShortPathString(p fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			n := *pe.FieldName
			if BracketedName(n) {
				b.WriteString("[" + strconv.Quote(n) + "]")
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(n)
		case pe.Index != nil:
			fmt.Fprintf(&b, "[%d]", *pe.Index)
		case pe.Value != nil:
			b.WriteString("[=" + shortValue(*pe.Value) + "]")
		case pe.Key != nil:
			b.WriteByte('[')
			for i, f := range *pe.Key {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(f.Name + "=" + shortValue(f.Value))
			}
			b.WriteByte(']')
		}
	}
	return b.String()
}

// BracketedName reports whether a field name is written ["name"] in the
// paths ShortPathString and AppendDisplayElement write: when it holds a
// dot, a bracket or a backslash (.metadata.annotations.a.b/c would read as
// three fields), or is blank.
func BracketedName(name string) bool {
	return strings.TrimSpace(name) == "" || strings.ContainsAny(name, ".[]\\")
}

// AppendDisplayElement appends pe as the owners views show it: as the API
// server writes paths in conflict messages (AppendElementString: .image,
// [name="nginx"]), except that a field name BracketedName picks is written
// ["deployment.kubernetes.io/revision"], so that the path is unambiguous
// and ParsePath reads it back as the same field.
func AppendDisplayElement(b []byte, pe fieldpath.PathElement) []byte {
	if pe.FieldName != nil && BracketedName(*pe.FieldName) {
		b = append(b, '[')
		b = strconv.AppendQuote(b, *pe.FieldName)
		return append(b, ']')
	}
	return AppendElementString(b, pe)
}

// AppendDisplayPath appends p, element by element, as AppendDisplayElement
// writes it.
func AppendDisplayPath(b []byte, p fieldpath.Path) []byte {
	for _, pe := range p {
		b = AppendDisplayElement(b, pe)
	}
	return b
}

// shortValue prints a key or set value the way scalar reads it back.
func shortValue(v value.Value) string {
	if v == nil {
		return "null"
	}
	if !v.IsString() {
		return value.ToString(v)
	}
	s := v.AsString()
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, ",]") || s[0] == '"' || s[0] == '\'' || !bareValue(s).IsString() {
		return strconv.Quote(s)
	}
	return s
}

// PathElements returns p's elements serialized as FieldsV1 keys (f:name,
// k:{...}, v:value, i:index). Unlike p.String(), this is unambiguous when a
// field name contains a dot; PathFromElements reads it back.
func PathElements(p fieldpath.Path) []string {
	out := make([]string, len(p))
	for i, pe := range p {
		s, err := fieldpath.SerializePathElement(pe)
		if err != nil {
			s = pe.String()
		}
		out[i] = s
	}
	return out
}

// PathFromElements is the inverse of PathElements.
func PathFromElements(elems []string) (fieldpath.Path, error) {
	p := make(fieldpath.Path, 0, len(elems))
	for i, e := range elems {
		pe, err := fieldpath.DeserializePathElement(e)
		if err != nil {
			return nil, fmt.Errorf("%w: element %d %q: %v", ErrInvalidPath, i, e, err)
		}
		p = append(p, pe)
	}
	return p, nil
}
