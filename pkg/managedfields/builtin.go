package managedfields

//go:generate go run ../../hack/genschema -o builtin_schema.go

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The built-in schema is client-go's (the one behind
// applyconfigurations.NewTypeConverter), generated into builtin_schema.go
// as one function per type. Parsing client-go's YAML schema whole took about
// two thirds of a predict run; a Deployment needs 122 of its 861 types
// (ConfigMap 8), so the converter builds, on first use of a kind, only the
// types reachable from that kind's type. TestBuiltinSchemaMatchesClientGo
// holds the generated types equal to client-go's, and
// TestBuiltinConverterMatchesClientGo the managedFields both give for every
// built-in kind.

// builtinType is one type of the generated built-in schema.
type builtinType struct {
	name string
	def  func() smdschema.TypeDef
}

var builtinTC = &builtinConverter{parsers: map[string]*typed.Parser{}}

// BuiltinTypeConverter returns the type converter for the built-in
// Kubernetes types, from the schema client-go ships with its apply
// configurations. It types an object with the types its kind reaches,
// built on first use, and is safe for concurrent use.
func BuiltinTypeConverter() TypeConverter {
	return builtinTC
}

// IsBuiltin reports whether gvk is a built-in type that BuiltinTypeConverter
// knows.
func IsBuiltin(gvk schema.GroupVersionKind) bool {
	return scheme.Scheme.Recognizes(gvk)
}

// builtinConverter is BuiltinTypeConverter. Every object of one type is
// typed by the same parser: structured-merge-diff compares and merges only
// values whose schemas are the same pointer.
type builtinConverter struct {
	// mu guards parsers.
	mu sync.Mutex
	// parsers holds, by type name, the parser of the types that name reaches.
	parsers map[string]*typed.Parser
}

var _ TypeConverter = (*builtinConverter)(nil)

// ObjectToTyped implements TypeConverter.
func (c *builtinConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	name, err := scheme.Scheme.ToOpenAPIDefinitionName(obj.GetObjectKind().GroupVersionKind())
	if err != nil {
		return nil, err
	}
	t := c.parser(name).Type(name)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	return t.FromStructured(obj, opts...)
}

// TypedToObject implements TypeConverter.
func (c *builtinConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	m, ok := v.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to convert value to unstructured for type %T", v.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func (c *builtinConverter) parser(name string) *typed.Parser {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.parsers[name]
	if !ok {
		p = &typed.Parser{Schema: smdschema.Schema{Types: builtinClosure(name)}}
		c.parsers[name] = p
	}
	return p
}

// builtinClosure returns the definitions of the built-in type name and of
// every type it reaches, in name order. An unknown name gives none, so that
// typing fails as with the full schema ("no type found matching").
func builtinClosure(name string) []smdschema.TypeDef {
	seen := map[string]bool{}
	var out []smdschema.TypeDef
	var visit func(n string)
	visit = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		def, ok := builtinDef(n)
		if !ok {
			return
		}
		out = append(out, def)
		forEachNamedRef(def.Atom, visit)
	}
	visit(name)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func builtinDef(name string) (smdschema.TypeDef, bool) {
	i := sort.Search(len(builtinTypes), func(i int) bool { return builtinTypes[i].name >= name })
	if i == len(builtinTypes) || builtinTypes[i].name != name {
		return smdschema.TypeDef{}, false
	}
	return builtinTypes[i].def(), true
}

// forEachNamedRef calls f with the name of every type a refers to.
func forEachNamedRef(a smdschema.Atom, f func(string)) {
	ref := func(r smdschema.TypeRef) {
		if r.NamedType != nil {
			f(*r.NamedType)
		}
		forEachNamedRef(r.Inlined, f)
	}
	if a.List != nil {
		ref(a.List.ElementType)
	}
	if a.Map != nil {
		ref(a.Map.ElementType)
		for _, fd := range a.Map.Fields {
			ref(fd.Type)
		}
	}
}

// Helpers of the generated schema: each call makes new values, so no two
// types share a pointer.

func nt(name string) smdschema.TypeRef { return smdschema.TypeRef{NamedType: &name} }

func st(s smdschema.Scalar) smdschema.TypeRef {
	return smdschema.TypeRef{Inlined: smdschema.Atom{Scalar: &s}}
}

func sc(s smdschema.Scalar) *smdschema.Scalar { return &s }

func str(s string) *string { return &s }

func relp(r smdschema.ElementRelationship) *smdschema.ElementRelationship { return &r }

func fd(name string, t smdschema.TypeRef) smdschema.StructField {
	return smdschema.StructField{Name: name, Type: t}
}

func fdd(name string, t smdschema.TypeRef, def any) smdschema.StructField {
	return smdschema.StructField{Name: name, Type: t, Default: def}
}
