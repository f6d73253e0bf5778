package krew

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// The values krew requires in every plugin manifest.
const (
	APIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	Kind       = "Plugin"
)

// MaxShortDescription is the longest shortDescription accepted. krew-index
// asks for about 50 characters, so that `kubectl krew search` stays on one line.
const MaxShortDescription = 50

// Platforms are the os/arch pairs every release of kubectl-rv ships, in the
// order the manifest lists them.
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// Manifest is a krew plugin manifest (krew's index.Plugin, v1alpha2).
type Manifest struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata is the manifest's object metadata; krew reads only the name.
type Metadata struct {
	Name string `json:"name"`
}

// Spec describes the plugin and where to download it.
type Spec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage,omitempty"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Caveats          string     `json:"caveats,omitempty"`
	Platforms        []Platform `json:"platforms"`
}

// Platform is one downloadable archive and the platforms it runs on.
type Platform struct {
	Selector Selector        `json:"selector"`
	URI      string          `json:"uri"`
	SHA256   string          `json:"sha256"`
	Files    []FileOperation `json:"files,omitempty"`
	Bin      string          `json:"bin"`
}

// Selector is the label selector krew matches against os and arch.
// MatchExpressions is kept loose so that Validate can reject it by name.
type Selector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []any             `json:"matchExpressions,omitempty"`
}

// FileOperation copies From (a path or glob in the archive) to To (a
// directory in the plugin's install folder).
type FileOperation struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Artifact is one released archive.
type Artifact struct {
	URI    string
	SHA256 string
}

// Values fill the template: the release version and, per "os/arch", the
// archive's URI and sha256.
type Values struct {
	Version   string
	Artifacts map[string]Artifact
}

// Render executes the manifest template with v. The template uses
// {{ .Version }}, {{ uri "linux/amd64" }} and {{ sha256 "linux/amd64" }}.
// A platform entry of the template (a "  - selector:" block under
// "  platforms:") whose platform v has no artifact for is left out, so that
// a build of some platforms renders a manifest of those; an artifact for a
// platform the template does not list is an error. The template's leading
// comment, which is about the template, is left out.
func Render(tmpl []byte, v Values) ([]byte, error) {
	for bytes.HasPrefix(tmpl, []byte("#")) {
		_, rest, _ := bytes.Cut(tmpl, []byte("\n"))
		tmpl = rest
	}
	tmpl, err := onlyPlatforms(tmpl, v.Artifacts)
	if err != nil {
		return nil, err
	}
	artifact := func(platform string) (Artifact, error) {
		a, ok := v.Artifacts[platform]
		if !ok {
			return Artifact{}, fmt.Errorf("no archive for platform %q", platform)
		}
		return a, nil
	}
	t, err := template.New("manifest").Option("missingkey=error").Funcs(template.FuncMap{
		"uri": func(p string) (string, error) {
			a, err := artifact(p)
			return a.URI, err
		},
		"sha256": func(p string) (string, error) {
			a, err := artifact(p)
			return a.SHA256, err
		},
	}).Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("parsing the manifest template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("rendering the manifest template: %w", err)
	}
	return buf.Bytes(), nil
}

// platformRE finds the platform a template's platform entry is for.
var platformRE = regexp.MustCompile(`\{\{\s*uri\s+"([^"]+)"\s*\}\}`)

// onlyPlatforms drops the template's platform entries that have no artifact.
func onlyPlatforms(tmpl []byte, artifacts map[string]Artifact) ([]byte, error) {
	head, list, ok := bytes.Cut(tmpl, []byte("\n  platforms:\n"))
	if !ok {
		return tmpl, nil
	}
	const start = "  - selector:"
	blocks := strings.SplitAfter(string(list), "\n")
	var kept strings.Builder
	var block strings.Builder
	listed := map[string]bool{}
	flush := func() {
		b := block.String()
		block.Reset()
		if b == "" {
			return
		}
		m := platformRE.FindStringSubmatch(b)
		if m == nil {
			kept.WriteString(b)
			return
		}
		listed[m[1]] = true
		if _, ok := artifacts[m[1]]; ok {
			kept.WriteString(b)
		}
	}
	for _, line := range blocks {
		if strings.HasPrefix(line, start) || !strings.HasPrefix(line, "  ") && line != "" {
			flush()
		}
		block.WriteString(line)
	}
	flush()
	var unknown []string
	for p := range artifacts {
		if !listed[p] {
			unknown = append(unknown, p)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("no platform entry in the manifest template for %s: build only %s", strings.Join(unknown, ", "), strings.Join(Platforms, ", "))
	}
	return []byte(string(head) + "\n  platforms:\n" + kept.String()), nil
}

// Parse decodes a manifest strictly: unknown or duplicate fields are errors,
// as they are for krew.
func Parse(data []byte) (*Manifest, error) {
	var m Manifest
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return nil, fmt.Errorf("decoding the manifest: %w", err)
	}
	return &m, nil
}

var (
	nameRE   = regexp.MustCompile(`^[\w-]+$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// semverRE is the Semantic Versioning 2.0.0 grammar with krew's
	// mandatory "v" prefix.
	semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
)

// ValidVersion reports whether v is a semantic version with a "v" prefix,
// as krew requires of spec.version (v0.1.0, v1.2.3-rc.1).
func ValidVersion(v string) bool { return semverRE.MatchString(v) }

// Validate checks m, read from a file named fileName, against krew's rules
// and the project's own (the five platforms, the LICENSE shipped with the
// binary). It returns every violation found, joined, or nil.
func Validate(m *Manifest, fileName string) error {
	return ValidateFor(m, fileName, Platforms)
}

// ValidateFor is Validate for a build of only some platforms (hack/release.sh
// with PLATFORMS set): the manifest must list exactly those.
func ValidateFor(m *Manifest, fileName string, platforms []string) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if m.APIVersion != APIVersion {
		bad("apiVersion must be %q, got %q", APIVersion, m.APIVersion)
	}
	if m.Kind != Kind {
		bad("kind must be %q, got %q", Kind, m.Kind)
	}
	base := strings.TrimSuffix(path.Base(strings.ReplaceAll(fileName, `\`, "/")), ".yaml")
	switch {
	case !nameRE.MatchString(m.Metadata.Name):
		bad("metadata.name %q must match %s", m.Metadata.Name, nameRE)
	case m.Metadata.Name != base:
		bad("metadata.name %q must equal the file name %q without .yaml", m.Metadata.Name, base)
	case m.Metadata.Name == "kubectl" || strings.HasPrefix(m.Metadata.Name, "kubectl-"):
		bad("metadata.name %q must not start with kubectl", m.Metadata.Name)
	}
	s := m.Spec
	if !ValidVersion(s.Version) {
		bad("spec.version %q must be a semantic version with a v prefix, such as v0.1.0", s.Version)
	}
	if !strings.HasPrefix(s.Homepage, "https://") {
		bad("spec.homepage %q must be an https URL", s.Homepage)
	}
	switch sd := s.ShortDescription; {
	case strings.TrimSpace(sd) == "":
		bad("spec.shortDescription is required")
	case strings.ContainsAny(sd, "\r\n"):
		bad("spec.shortDescription must be one line")
	case utf8.RuneCountInString(sd) > MaxShortDescription:
		bad("spec.shortDescription is %d characters, at most %d allowed", utf8.RuneCountInString(sd), MaxShortDescription)
	}
	if strings.TrimSpace(s.Description) == "" {
		bad("spec.description is required")
	}
	if len(s.Platforms) == 0 {
		bad("spec.platforms must list at least one platform")
	}
	seen := map[string]int{}
	for i, p := range s.Platforms {
		for _, err := range validatePlatform(p) {
			bad("spec.platforms[%d]: %w", i, err)
		}
		key := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		if j, dup := seen[key]; dup {
			bad("spec.platforms[%d]: selects %s, already selected by spec.platforms[%d]", i, key, j)
		}
		seen[key] = i
	}
	for _, want := range platforms {
		if _, ok := seen[want]; !ok {
			bad("spec.platforms: no archive for %s", want)
		}
	}
	for key, i := range seen {
		if !slices.Contains(platforms, key) {
			bad("spec.platforms[%d]: %s was not built", i, key)
		}
	}
	return errors.Join(errs...)
}

func validatePlatform(p Platform) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if len(p.Selector.MatchExpressions) > 0 {
		bad("selector.matchExpressions is not used here: select with matchLabels os and arch")
	}
	for k := range p.Selector.MatchLabels {
		if k != "os" && k != "arch" {
			bad("selector.matchLabels.%s: only os and arch may be selected", k)
		}
	}
	osName, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
	if osName == "" || arch == "" {
		bad("selector.matchLabels must set both os and arch")
	}
	switch {
	case !strings.HasPrefix(p.URI, "https://"):
		bad("uri %q must be an https URL", p.URI)
	case osName == "windows" && !strings.HasSuffix(p.URI, ".zip"):
		bad("uri %q: windows archives are .zip", p.URI)
	case osName != "windows" && !strings.HasSuffix(p.URI, ".tar.gz"):
		bad("uri %q: %s archives are .tar.gz", p.URI, osName)
	}
	if !sha256RE.MatchString(p.SHA256) {
		bad("sha256 %q must be 64 lowercase hex digits", p.SHA256)
	}
	wantBin := "kubectl-rv"
	if osName == "windows" {
		wantBin += ".exe"
	}
	if p.Bin != wantBin {
		bad("bin must be %q on %s, got %q", wantBin, osName, p.Bin)
	}
	var from []string
	for j, f := range p.Files {
		from = append(from, f.From)
		if f.From == "" || f.To == "" {
			bad("files[%d]: from and to are required", j)
		}
		for _, v := range []string{f.From, f.To} {
			if path.IsAbs(v) || strings.HasPrefix(v, `\`) || slices.Contains(strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' }), "..") {
				bad("files[%d]: %q must stay inside the archive and the install folder", j, v)
			}
		}
	}
	// krew copies only the listed files when files is set: the binary and
	// the licence must be among them.
	if len(p.Files) > 0 {
		for _, need := range []string{p.Bin, "LICENSE"} {
			if need != "" && !slices.Contains(from, need) {
				bad("files must install %s", need)
			}
		}
	}
	return errs
}
