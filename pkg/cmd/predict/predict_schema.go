package predict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
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
func (o *PredictOptions) readSchema(ctx context.Context) (managedfields.TypeConverter, writepath.Rules, error) {
	if len(o.SchemaFiles) == 0 {
		return managedfields.DefaultTypeConverter(), o.Rules, nil
	}
	docs, sources, err := o.schemaDocuments(ctx)
	if err != nil {
		return nil, nil, exitcode.Usage(fmt.Errorf("--schema %w", err))
	}
	stcs := make([]*managedfields.SchemaTypeConverter, len(docs))
	for i, d := range docs {
		if stcs[i], err = managedfields.ParseSchema(d); err != nil {
			return nil, nil, exitcode.Usage(fmt.Errorf("--schema %s: %w", sources[i], err))
		}
	}
	stc, err := managedfields.MergeSchemas(stcs...)
	rules := o.Rules
	if sr, ok := rules.(schemaRules); ok && err == nil {
		rules, err = sr.WithSchemas(docs...)
	}
	if err != nil {
		// Both errors say which document (DuplicateKindError,
		// crd.SchemaError).
		source := ""
		var de interface{ Document() int }
		if errors.As(err, &de) {
			source = " " + sources[de.Document()]
		}
		return nil, nil, exitcode.Usage(fmt.Errorf("--schema%s: %w", source, err))
	}
	return stc, rules, nil
}

// schemaDocuments reads the --schema paths into their schemas (JSON or
// YAML) and where each was read (file:line, escaped): every object of a
// path (a file, a directory's files or - for stdin; YAML streams, JSON,
// Lists), each of which must be a CustomResourceDefinition, or a file that
// is an OpenAPI v3 document (components.schemas), which is no object and
// is read again as such only when reading objects fails.
func (o *PredictOptions) schemaDocuments(ctx context.Context) (docs [][]byte, sources []string, err error) {
	for _, p := range o.SchemaFiles {
		objs, err := objects.Read(ctx, []string{p}, false, o.In)
		if err != nil {
			if errors.Is(err, input.ErrTooLarge) || ctx.Err() != nil {
				return nil, nil, err
			}
			if data, ok := openAPIDocument(ctx, p); ok {
				docs, sources = append(docs, data), append(sources, text.Escape(p))
				continue
			}
			return nil, nil, err
		}
		for _, obj := range objs {
			if obj.Object.GetKind() != "CustomResourceDefinition" {
				return nil, nil, fmt.Errorf("%s: a %s, not a CustomResourceDefinition: give CRDs (kubectl get crd NAME -o yaml) or an OpenAPI v3 document (components.schemas)", obj.Source, text.Escape(obj.Object.GetKind()))
			}
			data, err := json.Marshal(obj.Object.Object)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", obj.Source, err)
			}
			docs, sources = append(docs, data), append(sources, obj.Source.String())
		}
	}
	return docs, sources, nil
}

// openAPIDocument returns the content of path when it is a file holding an
// OpenAPI v3 document (components.schemas), which is not a Kubernetes
// object; false otherwise (the caller reports why objects.Read
// failed).
func openAPIDocument(ctx context.Context, path string) ([]byte, bool) {
	if path == "-" {
		return nil, false
	}
	data, err := input.ReadFile(ctx, path, nil)
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
