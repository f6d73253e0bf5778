package managedfields

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upstream "k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// TypeConverter turns objects into structured-merge-diff typed values and
// back. It is the API server's own interface
// (k8s.io/apimachinery/pkg/util/managedfields.TypeConverter).
type TypeConverter = upstream.TypeConverter

// SchemaTypeConverter is a TypeConverter built from an OpenAPI v3 document
// or a CustomResourceDefinition; see ParseSchema. Kinds it does not know
// fall back to DefaultTypeConverter.
type SchemaTypeConverter struct {
	kinds map[schema.GroupVersionKind]*typed.ParseableType
	// custom are the registry facts of a CustomResourceDefinition's
	// versions; nil for an OpenAPI document.
	custom map[schema.GroupVersionKind]CustomResource
}

// CustomResource is what a CustomResourceDefinition says of one version's
// resource, besides its schema.
type CustomResource struct {
	// Resource is the plural resource name.
	Resource string
	// StatusSubresource says the version has a /status subresource.
	StatusSubresource bool
	// Namespaced says the objects are namespaced (the CRD's scope).
	Namespaced bool
	// ConversionWebhook says a webhook converts between the CRD's
	// versions (strategy Webhook); otherwise (strategy None) a conversion
	// only changes apiVersion.
	ConversionWebhook bool
}

// CustomResource returns what the CRD the converter was built from says
// of kind gvk's resource; false for kinds of no CRD.
func (c *SchemaTypeConverter) CustomResource(gvk schema.GroupVersionKind) (CustomResource, bool) {
	cr, ok := c.custom[gvk]
	return cr, ok
}

var _ TypeConverter = (*SchemaTypeConverter)(nil)

// Kinds lists the kinds the schema defines, sorted.
func (c *SchemaTypeConverter) Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(c.kinds))
	for k := range c.kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// ObjectToTyped implements TypeConverter.
func (c *SchemaTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	t, ok := c.kinds[gvk]
	if !ok {
		return DefaultTypeConverter().ObjectToTyped(obj, opts...)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return t.FromStructured(obj, opts...)
	}
	return t.FromUnstructured(u.UnstructuredContent(), opts...)
}

// TypedToObject implements TypeConverter.
func (c *SchemaTypeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	m, ok := v.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("typed value is a %T, not an object", v.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// ParseSchema builds a TypeConverter from data, which is either an OpenAPI
// v3 document (as served at /openapi/v3/apis/GROUP/VERSION, JSON or YAML)
// or a CustomResourceDefinition manifest. In a CRD, metadata is typed as
// ObjectMeta, as the API server types it for custom resources: finalizers
// a set, ownerReferences a map keyed by uid (see objectMetaSchema).
func ParseSchema(data []byte) (*SchemaTypeConverter, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	var head struct {
		Kind       string `json:"kind"`
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("decoding schema: %w", err)
	}
	switch {
	case head.Kind == "CustomResourceDefinition":
		return parseCRD(js)
	case len(head.Components.Schemas) > 0:
		for _, name := range slices.Sorted(maps.Keys(head.Components.Schemas)) {
			if head.Components.Schemas[name] == nil {
				return nil, fmt.Errorf("components.schemas.%s is null: an OpenAPI schema is an object", text.Escape(name))
			}
		}
		return fromOpenAPI(head.Components.Schemas, false)
	default:
		return nil, errors.New("schema is neither an OpenAPI v3 document (components.schemas) nor a CustomResourceDefinition")
	}
}

// MergeSchemas returns a converter with the kinds of every one of cs
// (several CRDs given to predict --schema). A kind that two of them
// define is a *DuplicateKindError: which one the server serves cannot be
// told.
func MergeSchemas(cs ...*SchemaTypeConverter) (*SchemaTypeConverter, error) {
	out := &SchemaTypeConverter{kinds: map[schema.GroupVersionKind]*typed.ParseableType{}}
	for i, c := range cs {
		for gvk, t := range c.kinds {
			if _, dup := out.kinds[gvk]; dup {
				return nil, &DuplicateKindError{GVK: gvk, Index: i}
			}
			out.kinds[gvk] = t
		}
		for gvk, cr := range c.custom {
			if out.custom == nil {
				out.custom = map[schema.GroupVersionKind]CustomResource{}
			}
			out.custom[gvk] = cr
		}
	}
	return out, nil
}

// DuplicateKindError is a kind that two schemas given to MergeSchemas
// define; Index is the second one's.
type DuplicateKindError struct {
	GVK   schema.GroupVersionKind
	Index int
}

func (e *DuplicateKindError) Error() string {
	return gvkName(e.GVK) + " is defined twice: give each kind's CustomResourceDefinition once"
}

// Document is the index of the schema that defines the kind again.
func (e *DuplicateKindError) Document() int { return e.Index }

// gvkName names a kind as a manifest does: example.com/v1 Widget.
func gvkName(gvk schema.GroupVersionKind) string {
	return gvk.GroupVersion().String() + " " + gvk.Kind
}

func fromOpenAPI(schemas map[string]*spec.Schema, preserveUnknown bool) (*SchemaTypeConverter, error) {
	ts, err := schemaconv.ToSchemaFromOpenAPI(schemas, preserveUnknown)
	if err != nil {
		return nil, fmt.Errorf("converting the OpenAPI schema: %w", err)
	}
	parser := &typed.Parser{Schema: smdschema.Schema{Types: ts.Types}}
	c := &SchemaTypeConverter{kinds: map[schema.GroupVersionKind]*typed.ParseableType{}}
	for name, s := range schemas {
		for _, gvk := range gvksOf(s) {
			t := parser.Type(name)
			c.kinds[gvk] = &t
		}
	}
	if len(c.kinds) == 0 {
		return nil, errors.New("the schema defines no kind (no x-kubernetes-group-version-kind)")
	}
	return c, nil
}

func gvksOf(s *spec.Schema) []schema.GroupVersionKind {
	raw, ok := s.Extensions["x-kubernetes-group-version-kind"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var list []schema.GroupVersionKind
	if err := json.Unmarshal(b, &list); err != nil {
		return nil
	}
	out := list[:0]
	for _, g := range list {
		if g.Kind != "" && g.Version != "" {
			out = append(out, g)
		}
	}
	return out
}

// crdVersion is one version of a CustomResourceDefinition: its name and
// schema (nil: none given).
type crdVersion struct {
	Name   string `json:"name"`
	Schema struct {
		OpenAPIV3Schema *spec.Schema `json:"openAPIV3Schema"`
	} `json:"schema"`
	Subresources struct {
		Status *struct{} `json:"status"`
	} `json:"subresources"`
}

func parseCRD(js []byte) (*SchemaTypeConverter, error) {
	var crd struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind   string `json:"kind"`
				Plural string `json:"plural"`
			} `json:"names"`
			Scope      string `json:"scope"`
			Conversion struct {
				Strategy string `json:"strategy"`
			} `json:"conversion"`
			PreserveUnknownFields bool         `json:"preserveUnknownFields"`
			Versions              []crdVersion `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(js, &crd); err != nil {
		return nil, fmt.Errorf("decoding the CustomResourceDefinition: %w", err)
	}
	c, err := crdConverter(crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.PreserveUnknownFields, crd.Spec.Versions)
	if err != nil {
		return nil, err
	}
	c.custom = map[schema.GroupVersionKind]CustomResource{}
	for _, v := range crd.Spec.Versions {
		c.custom[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = CustomResource{
			Resource: crd.Spec.Names.Plural, StatusSubresource: v.Subresources.Status != nil,
			Namespaced:        crd.Spec.Scope == "Namespaced",
			ConversionWebhook: crd.Spec.Conversion.Strategy == "Webhook",
		}
	}
	return c, nil
}

// crdConverter types the versions of custom kind group/kind as the API
// server does: each version's schema (or, without one, any fields kept
// and deduced) with apiVersion, kind and ObjectMeta added.
func crdConverter(group, kind string, preserveUnknown bool, versions []crdVersion) (*SchemaTypeConverter, error) {
	schemas := map[string]*spec.Schema{}
	for _, v := range versions {
		s := v.Schema.OpenAPIV3Schema
		if s == nil {
			s = &spec.Schema{}
			s.Type = spec.StringOrArray{"object"}
			s.Extensions = spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}
		}
		if s.Properties == nil {
			s.Properties = map[string]spec.Schema{}
		}
		// The server adds apiVersion, kind and ObjectMeta to every
		// version's schema, whatever the CRD says of metadata.
		str := spec.Schema{}
		str.Type = spec.StringOrArray{"string"}
		s.Properties["apiVersion"] = str
		s.Properties["kind"] = str
		s.Properties["metadata"] = objectMetaSchema()
		if s.Extensions == nil {
			s.Extensions = spec.Extensions{}
		}
		s.Extensions["x-kubernetes-group-version-kind"] = []any{map[string]any{
			"group": group, "version": v.Name, "kind": kind,
		}}
		schemas[group+"."+v.Name+"."+kind] = s
	}
	if len(schemas) == 0 {
		return nil, errors.New("the CustomResourceDefinition has no versions")
	}
	return fromOpenAPI(schemas, preserveUnknown)
}

// objectMetaJSON is metav1.ObjectMeta's OpenAPI schema with the list and
// map semantics of its Go markers (+listType=set on finalizers,
// +listType=map +listMapKey=uid on ownerReferences, atomic
// OwnerReference and ManagedFieldsEntry), which the API server puts in
// every custom resource's schema. TestCRDMetadataMatchesObjectMeta holds it
// to the built-in schema's ObjectMeta.
const objectMetaJSON = `{"type": "object", "properties": {
  "name": {"type": "string"}, "generateName": {"type": "string"}, "namespace": {"type": "string"},
  "selfLink": {"type": "string"}, "uid": {"type": "string"}, "resourceVersion": {"type": "string"},
  "generation": {"type": "integer"}, "creationTimestamp": {"type": "string"},
  "deletionTimestamp": {"type": "string"}, "deletionGracePeriodSeconds": {"type": "integer"},
  "labels": {"type": "object", "additionalProperties": {"type": "string"}},
  "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
  "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
  "ownerReferences": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"],
    "items": {"type": "object", "x-kubernetes-map-type": "atomic", "required": ["apiVersion", "kind", "name", "uid"], "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}, "uid": {"type": "string"},
      "controller": {"type": "boolean"}, "blockOwnerDeletion": {"type": "boolean"}}}},
  "managedFields": {"type": "array", "x-kubernetes-list-type": "atomic",
    "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}`

func objectMetaSchema() spec.Schema {
	var s spec.Schema
	if err := json.Unmarshal([]byte(objectMetaJSON), &s); err != nil {
		panic("objectMetaJSON: " + err.Error())
	}
	return s
}

// FieldManager runs the API server's own field manager
// (k8s.io/apimachinery/pkg/util/managedfields) in process for one kind, on
// unstructured objects. It tracks managedFields exactly as kube-apiserver
// does for an update or a server-side apply, including the ancient-changes
// cap and last-applied-configuration interoperability, but it neither
// defaults nor validates objects: the server does both, so fields that only
// defaulting adds are missing from its results.
//
// A FieldManager is safe for concurrent use.
type FieldManager struct {
	tc  TypeConverter
	gvk schema.GroupVersionKind
	// conv converts between the kind's versions, where the engine can.
	conv unstructuredConverter

	// mu guards bySub.
	mu    sync.Mutex
	bySub map[string]*upstream.FieldManager
}

// NewFieldManager returns a field manager for objects of kind gvk, typed by
// tc (BuiltinTypeConverter for built-in kinds).
func NewFieldManager(tc TypeConverter, gvk schema.GroupVersionKind) (*FieldManager, error) {
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("field manager: incomplete kind %q", gvk.String())
	}
	m := &FieldManager{tc: tc, gvk: gvk, bySub: map[string]*upstream.FieldManager{}}
	if sc, ok := tc.(*SchemaTypeConverter); ok {
		if cr, ok := sc.CustomResource(gvk); ok {
			m.conv = unstructuredConverter{crd: true, webhook: cr.ConversionWebhook}
		}
	}
	if _, err := m.forSubresource(""); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *FieldManager) forSubresource(sub string) (*upstream.FieldManager, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fm, ok := m.bySub[sub]; ok {
		return fm, nil
	}
	fm, err := upstream.NewDefaultFieldManager(m.tc, m.conv, m.conv, creater{}, m.gvk, m.gvk.GroupVersion(), sub, nil)
	if err != nil {
		return nil, err
	}
	m.bySub[sub] = fm
	return fm, nil
}

// Update records a non-apply write (create, update, patch) of obj over live
// by manager, as the server does after merging the request: it returns a
// copy of obj whose managedFields give manager the fields it changed and
// take them from everyone else. Updates never conflict. For a create, pass
// an empty live object (NewEmpty). When obj carries managedFields of its own
// (a client that read them and sends them back), they replace live's, as
// on the server; when obj has none, live's are kept. subresource is "" or,
// for example, "status".
func (m *FieldManager) Update(live, obj *unstructured.Unstructured, manager, subresource string) (*unstructured.Unstructured, error) {
	fm, err := m.forSubresource(subresource)
	if err != nil {
		return nil, err
	}
	if err := m.convertible(live); err != nil {
		return nil, err
	}
	// The server never mutates the live object (it is shared with the
	// watch cache), so neither does the upstream field manager.
	out, err := fm.Update(live, m.withKind(obj.DeepCopy()), manager)
	if err != nil {
		return nil, err
	}
	return toUnstructured(out)
}

// Apply runs a server-side apply of patch (an apply configuration: the
// fields manager wants to own) over live and returns the merged object with
// its new managedFields. On conflicts it returns the same *StatusError the
// server sends (409, one FieldManagerConflict cause per field); Conflicts
// decodes it. force takes the conflicting fields instead. For an object
// that does not exist yet, pass NewEmpty(gvk).
func (m *FieldManager) Apply(live, patch *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	fm, err := m.forSubresource("")
	if err != nil {
		return nil, err
	}
	if manager == "" {
		return nil, errors.New("apply needs a field manager")
	}
	if err := m.convertible(live); err != nil {
		return nil, err
	}
	out, err := fm.Apply(live, m.withKind(patch.DeepCopy()), manager, force)
	if err != nil {
		return nil, err
	}
	return toUnstructured(out)
}

// NewEmpty returns the empty object of kind gvk that stands for "does not
// exist yet" in Update and Apply.
func NewEmpty(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u
}

func (m *FieldManager) withKind(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u.GetKind() == "" {
		u.SetGroupVersionKind(m.gvk)
	}
	return u
}

func toUnstructured(o runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// Conflict is one field an apply conflicts on and its current owner, as the
// server lists them in a FieldManagerConflict cause.
type Conflict struct {
	// Field is the path in server style: .spec.containers[name="nginx"].image
	Field string `json:"field"`
	// Manager is the owner's name.
	Manager string `json:"manager"`
	// Operation is Update or Apply.
	Operation string `json:"operation,omitempty"`
	// APIVersion is the version the owner wrote with (Update owners only).
	APIVersion string `json:"apiVersion,omitempty"`
	// Subresource is set when the owner wrote through a subresource.
	Subresource string `json:"subresource,omitempty"`
}

// Conflicts decodes the conflicts of an apply error (from the server or from
// FieldManager.Apply). ok is false when err is not an apply conflict.
// Conflicts come back sorted by field, then owner (manager, operation,
// subresource, apiVersion).
func Conflicts(err error) (conflicts []Conflict, ok bool) {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		return nil, false
	}
	st := se.Status()
	if st.Details == nil {
		return nil, false
	}
	for _, c := range st.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		cf, perr := ParseConflictMessage(c.Message)
		if perr != nil {
			cf = Conflict{Manager: c.Message}
		}
		cf.Field = c.Field
		conflicts = append(conflicts, cf)
	}
	if len(conflicts) == 0 {
		return nil, false
	}
	sort.Slice(conflicts, func(i, j int) bool {
		a, b := conflicts[i], conflicts[j]
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Manager != b.Manager {
			return a.Manager < b.Manager
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.Subresource != b.Subresource {
			return a.Subresource < b.Subresource
		}
		return a.APIVersion < b.APIVersion
	})
	return conflicts, true
}

// ParseConflictMessage decodes a FieldManagerConflict cause message, such as
//
//	conflict with "kubectl-create" using apps/v1
//	conflict with "kubectl" with subresource "status"
//	conflict with "ctl" using v1 at 2026-11-21T15:00:00Z
//
// into the owner's identity (Field is left empty). Apply owners carry no
// apiVersion ("using"); Update owners do.
func ParseConflictMessage(msg string) (Conflict, error) {
	rest, ok := strings.CutPrefix(msg, "conflict with ")
	if !ok {
		return Conflict{}, fmt.Errorf("conflict message %q: want a leading \"conflict with \"", msg)
	}
	name, rest, err := cutQuoted(rest)
	if err != nil {
		return Conflict{}, fmt.Errorf("conflict message %q: manager: %w", msg, err)
	}
	c := Conflict{Manager: name, Operation: string(metav1.ManagedFieldsOperationApply)}
	if r, ok := strings.CutPrefix(rest, " with subresource "); ok {
		c.Subresource, rest, err = cutQuoted(r)
		if err != nil {
			return Conflict{}, fmt.Errorf("conflict message %q: subresource: %w", msg, err)
		}
	}
	if r, ok := strings.CutPrefix(rest, " using "); ok {
		c.Operation = string(metav1.ManagedFieldsOperationUpdate)
		c.APIVersion, _, _ = strings.Cut(r, " at ")
		if c.APIVersion == "" {
			return Conflict{}, fmt.Errorf("conflict message %q: empty apiVersion", msg)
		}
		rest = ""
	}
	if rest != "" {
		return Conflict{}, fmt.Errorf("conflict message %q: unexpected %q", msg, rest)
	}
	return c, nil
}

func cutQuoted(s string) (string, string, error) {
	if !strings.HasPrefix(s, `"`) {
		return "", s, errors.New("want a quoted string")
	}
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", s, err
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", s, err
	}
	return v, s[len(q):], nil
}

// ConversionError says that a write's field manager needs live converted
// to another version of its kind, which a conversion webhook does: the
// offline engine cannot know the result.
type ConversionError struct {
	// GVK is the object's kind, Version the version an entry of its
	// managedFields is in.
	GVK     schema.GroupVersionKind
	Version string
}

func (e *ConversionError) Error() string {
	return fmt.Sprintf("the managedFields of %s name version %s, and a conversion webhook converts between them, which runs only on the cluster", e.GVK, text.Escape(e.Version))
}

// convertible returns a *ConversionError when live's managedFields have an
// entry in another version of the kind, which a conversion webhook would
// convert. The field manager converts the object to every entry's
// version to compare field sets.
func (m *FieldManager) convertible(live *unstructured.Unstructured) error {
	if !m.conv.webhook {
		return nil
	}
	own := m.gvk.GroupVersion().String()
	for _, e := range live.GetManagedFields() {
		if e.APIVersion != "" && e.APIVersion != own {
			return &ConversionError{GVK: m.gvk, Version: e.APIVersion}
		}
	}
	return nil
}

// unstructuredConverter converts unstructured objects the way the API
// server does for custom resources: to their own version, the identity;
// to another version of a CRD's kind whose conversion strategy is None
// (crd set, webhook not), what apiextensions-apiserver's nopConverter
// does: only apiVersion changes. Other conversions are errors.
type unstructuredConverter struct {
	crd, webhook bool
}

func (unstructuredConverter) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("field manager: cannot convert %T to %T", in, out)
	}
	dst.Object = src.DeepCopy().Object
	return nil
}

func (c unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	kind := in.GetObjectKind().GroupVersionKind()
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind})
	switch {
	case ok && target == kind:
		return in, nil
	case ok && c.crd && !c.webhook && target.GroupKind() == kind.GroupKind():
		if u, isU := in.(*unstructured.Unstructured); isU {
			out := u.DeepCopy()
			out.SetGroupVersionKind(target)
			return out, nil
		}
	}
	return nil, fmt.Errorf("field manager: converting %s to another version is not supported offline", kind)
}

func (unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (unstructuredConverter) Default(runtime.Object) {}

type creater struct{}

func (creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	return NewEmpty(gvk), nil
}

// Owner names the conflict's owner like the server: "kubectl-create" using
// apps/v1.
func (c Conflict) Owner() string {
	s := strconv.Quote(c.Manager)
	if c.Subresource != "" {
		s += " with subresource " + strconv.Quote(c.Subresource)
	}
	if c.APIVersion != "" {
		s += " using " + c.APIVersion
	}
	return s
}
