package cmd

import (
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// readSchema returns the type converter of the --schema files, or the
// default one (the built-in schema; custom resources as ObjectMeta and
// deduced fields) without them, and o.Rules with the custom resource kinds
// of the CustomResourceDefinitions they hold, where the rules take them
// (schemaRules). Every CRD of every file counts; a kind two of them define
// is an error.
func (o *PredictOptions) readSchema() (managedfields.TypeConverter, writepath.Rules, error) {
	if len(o.SchemaFiles) == 0 {
		return managedfields.DefaultTypeConverter(), o.Rules, nil
	}
	docs, err := o.schemaDocuments()
	if err != nil {
		return nil, nil, exitcode.Usage(fmt.Errorf("--schema %w", err))
	}
	rules := o.Rules
	var stc *managedfields.SchemaTypeConverter
	for _, d := range docs {
		one, err := managedfields.ParseSchema(d.data)
		if sr, ok := rules.(schemaRules); ok && err == nil {
			rules, err = sr.WithSchema(d.data)
		}
		if err == nil && stc != nil {
			one, err = managedfields.MergeSchemas(stc, one)
		}
		if err != nil {
			return nil, nil, exitcode.Usage(fmt.Errorf("--schema %s: %w", d.source, err))
		}
		stc = one
	}
	return stc, rules, nil
}

// schemaDocument is one schema of --schema: a CustomResourceDefinition or
// an OpenAPI v3 document, and where it was read (file:line, escaped).
type schemaDocument struct {
	data   []byte
	source string
}

// schemaDocuments reads the --schema paths: a file that is an OpenAPI v3
// document (components.schemas) as it is; otherwise every object of the
// path (a file, a directory's files or - for stdin; YAML streams, JSON,
// Lists), each of which must be a CustomResourceDefinition.
func (o *PredictOptions) schemaDocuments() ([]schemaDocument, error) {
	var out []schemaDocument
	for _, p := range o.SchemaFiles {
		if data, ok := openAPIDocument(p); ok {
			out = append(out, schemaDocument{data: data, source: text.Escape(p)})
			continue
		}
		objs, err := objects.ReadFiles([]string{p}, false, o.In)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.Object.GetKind() != "CustomResourceDefinition" {
				return nil, fmt.Errorf("%s: a %s, not a CustomResourceDefinition: give CRDs (kubectl get crd NAME -o yaml) or an OpenAPI v3 document (components.schemas)", obj.Source, text.Escape(obj.Object.GetKind()))
			}
			data, err := json.Marshal(obj.Object.Object)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Source, err)
			}
			out = append(out, schemaDocument{data: data, source: obj.Source.String()})
		}
	}
	return out, nil
}

// openAPIDocument returns the content of path when it is a file holding an
// OpenAPI v3 document (components.schemas), which is not a Kubernetes
// object; false otherwise, and for whatever cannot be read or decoded,
// which objects.ReadFiles reports.
func openAPIDocument(path string) ([]byte, bool) {
	if path == "-" {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, false
	}
	var head struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if json.Unmarshal(js, &head) != nil || len(head.Components.Schemas) == 0 {
		return nil, false
	}
	return data, true
}
