package scenario

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// checkTypes walks the YAML tree along the Scenario type and refuses a
// scalar whose YAML type is not the field's: yaml.v3 would otherwise turn
// `increment: true` or `fieldManager: .nan` into the strings "true" and
// ".nan", and report `rate: fast` as "cannot unmarshal !!str". The error
// names the line and the field. Values typed any (objects, change values)
// and the fields with their own decoder (durations) are not checked here.
func checkTypes(n *yaml.Node, t reflect.Type, path string) *Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkStruct(n, t, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return typeErr(n, path, "a list")
		}
		for i, c := range n.Content {
			if err := checkTypes(c, t.Elem(), path+"."+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	case reflect.String:
		return wantScalar(n, path, "a string", "!!str")
	case reflect.Bool:
		return wantScalar(n, path, "true or false", "!!bool")
	case reflect.Int, reflect.Int64:
		return wantScalar(n, path, "an integer", "!!int")
	case reflect.Float64:
		return wantScalar(n, path, "a number", "!!int", "!!float")
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// checkStruct checks the fields of a mapping decoded into struct type t;
// unknown keys are left to the decoder, which names them.
func checkStruct(n *yaml.Node, t reflect.Type, path string) *Error {
	if n.Kind != yaml.MappingNode {
		return typeErr(n, path, "a mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		f, ok := fieldByYAMLName(t, k)
		if !ok {
			continue
		}
		p := k
		if path != "" {
			p = path + "." + k
		}
		if err := checkTypes(n.Content[i+1], f.Type, p); err != nil {
			return err
		}
	}
	return nil
}

func fieldByYAMLName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func wantScalar(n *yaml.Node, path, want string, tags ...string) *Error {
	if n.Kind == yaml.ScalarNode {
		for _, t := range tags {
			if n.Tag == t {
				return nil
			}
		}
	}
	return typeErr(n, path, want)
}

// typeErr says what the field wants and what the file has.
func typeErr(n *yaml.Node, path, want string) *Error {
	got := "a mapping"
	switch n.Kind {
	case yaml.SequenceNode:
		got = "a list"
	case yaml.ScalarNode:
		got = fmt.Sprintf("%q (%s)", n.Value, yamlTypeName(n.Tag))
	}
	msg := fmt.Sprintf("%s must be %s, not %s", dotted(path), want, got)
	if want == "a string" && n.Kind == yaml.ScalarNode {
		msg += ": quote it if you mean the text"
	}
	return &Error{Line: n.Line, Msg: msg}
}

func yamlTypeName(tag string) string {
	switch tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	}
	return "a " + strings.TrimPrefix(tag, "!!")
}
