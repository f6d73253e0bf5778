package positions

import (
	"bufio"
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Template is the file a rendered object was made from: the file a pull
// request changes, where the rendered output is a build product.
type Template struct {
	// Tool is "helm" (a "# Source:" comment of helm template) or
	// "kustomize" (a config.kubernetes.io/origin annotation).
	Tool string
	// File is the template as the tool names it: for helm
	// chart/templates/x.yaml, relative to the chart's parent directory;
	// for kustomize the resource's path relative to the kustomization, or,
	// for a generated object, the kustomization that configured the
	// generator.
	File string
	// Repo and Ref name the remote base kustomize fetched the file from;
	// both are empty for a local file.
	Repo, Ref string
}

// OriginAnnotation is the annotation kustomize writes on every object it
// builds when the kustomization asks for buildMetadata: [originAnnotations].
const OriginAnnotation = "config.kubernetes.io/origin"

const helmPrefix = "# Source: "

// helmSource returns the template a "# Source: path" comment before the
// document's content names, as helm template writes it, or nil.
func helmSource(data []byte) *Template {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if path, ok := strings.CutPrefix(l, helmPrefix); ok && strings.TrimSpace(path) != "" {
			return &Template{Tool: "helm", File: strings.TrimSpace(path)}
		}
		if l != "" && l[0] != '#' {
			return nil
		}
	}
	return nil
}

// kustomizeOrigin returns the template the origin annotation of the
// object m names, or nil.
func kustomizeOrigin(m *yaml.Node) *Template {
	v := lookup(m, "metadata", "annotations", OriginAnnotation)
	if v == nil || v.Kind != yaml.ScalarNode {
		return nil
	}
	var origin struct {
		Path         string `yaml:"path"`
		Repo         string `yaml:"repo"`
		Ref          string `yaml:"ref"`
		ConfiguredIn string `yaml:"configuredIn"`
	}
	if yaml.Unmarshal([]byte(v.Value), &origin) != nil {
		return nil
	}
	file := origin.Path
	if file == "" {
		file = origin.ConfiguredIn
	}
	if file == "" {
		return nil
	}
	return &Template{Tool: "kustomize", File: file, Repo: origin.Repo, Ref: origin.Ref}
}

// lookup follows field names from m, through aliases, and returns the
// node found or nil.
func lookup(m *yaml.Node, names ...string) *yaml.Node {
	for _, name := range names {
		if m.Kind != yaml.MappingNode {
			return nil
		}
		_, v, _ := field(m, name)
		if v == nil {
			return nil
		}
		m, _ = deref(v, nil)
	}
	return m
}
