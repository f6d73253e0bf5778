package cireport

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// SARIFSchema is the URI of the SARIF 2.1.0 schema the output names.
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// The SARIF 2.1.0 objects kubectl-rv writes: a log with one run, whose
// tool.driver lists the rules, and a result per finding.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool struct {
			Driver sarifDriver `json:"driver"`
		} `json:"tool"`
		// ColumnKind says columns count characters, as YAML's do.
		ColumnKind string        `json:"columnKind"`
		Results    []sarifResult `json:"results"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string       `json:"id"`
		Name             string       `json:"name,omitempty"`
		ShortDescription sarifMessage `json:"shortDescription"`
		FullDescription  sarifMessage `json:"fullDescription"`
		Help             sarifMessage `json:"help"`
	}
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID           string          `json:"ruleId"`
		RuleIndex        *int            `json:"ruleIndex,omitempty"`
		Level            Level           `json:"level"`
		Message          sarifMessage    `json:"message"`
		Locations        []sarifLocation `json:"locations"`
		RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	}
	sarifLocation struct {
		ID               *int                   `json:"id,omitempty"`
		PhysicalLocation *sarifPhysical         `json:"physicalLocation,omitempty"`
		LogicalLocations []sarifLogicalLocation `json:"logicalLocations,omitempty"`
		Message          *sarifMessage          `json:"message,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region *sarifRegion `json:"region,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	sarifLogicalLocation struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// WriteSARIF writes r as a SARIF 2.1.0 log with one run: tool.driver
// with one rule per Rule (its help text and fix), a result per finding.
// A result's location has the file and region (startLine, startColumn)
// where the finding has a file position, and always the object as a
// logical location (TYPE/NS/NAME). A finding at a template position is
// located at the template without a region, the rendered line being a
// related location; one from standard input has the logical location only
// and says its line in the message.
func WriteSARIF(w io.Writer, r Report) error {
	run := sarifRun{ColumnKind: "unicodeCodePoints", Results: []sarifResult{}}
	run.Tool.Driver = sarifDriver{Name: r.Tool.Name, Version: r.Tool.Version, InformationURI: r.Tool.InformationURI, Rules: []sarifRule{}}
	for _, ru := range r.Rules {
		help := ru.Help
		if ru.Fix != "" {
			help += "\nFix: " + ru.Fix
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: ru.ID, Name: pascal(ru.Name),
			ShortDescription: sarifMessage{ru.Name}, FullDescription: sarifMessage{ru.Help}, Help: sarifMessage{help},
		})
	}
	for _, g := range r.Groups {
		for _, c := range g.Cases {
			for _, f := range c.Findings {
				run.Results = append(run.Results, sarifResultOf(r, g, c, f))
			}
		}
	}
	b, err := json.MarshalIndent(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sarif: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// sarifResultOf renders one finding of case c.
func sarifResultOf(r Report, g Group, c Case, f Finding) sarifResult {
	res := sarifResult{RuleID: f.Rule, Level: f.Level}
	if _, i := r.rule(f.Rule); i >= 0 {
		res.RuleIndex = &i
	}
	msg := r.about(g, c, f) + ": " + f.Message
	name := f.Object.Name
	if name == "" {
		name = f.Object.Type
	}
	loc := sarifLocation{LogicalLocations: []sarifLogicalLocation{{
		Name: name, FullyQualifiedName: f.Object.String(), Kind: "resource",
	}}}
	l := f.Location
	switch {
	case l.Template != "":
		loc.PhysicalLocation = sarifFile(l.Template, 0, 0)
		msg += " [" + where(l) + "]"
		if l.File != "" && l.Known() {
			id := 1
			res.RelatedLocations = []sarifLocation{{ID: &id, PhysicalLocation: sarifFile(l.File, l.Line, l.Column),
				Message: &sarifMessage{"rendered output of " + l.Template}}}
		}
	case l.File != "":
		loc.PhysicalLocation = sarifFile(l.File, l.Line, l.Column)
	case l.Known():
		msg += " [" + where(l) + "]"
	}
	res.Message = sarifMessage{msg}
	res.Locations = []sarifLocation{loc}
	return res
}

// sarifFile is a physical location in file, with a region when line is
// known.
func sarifFile(file string, line, col int) *sarifPhysical {
	p := &sarifPhysical{}
	p.ArtifactLocation.URI = fileURI(file)
	if line > 0 {
		p.Region = &sarifRegion{StartLine: line, StartColumn: col}
	}
	return p
}

// fileURI is a file path as a URI reference: relative paths stay relative
// (GitHub resolves them against the checkout), absolute ones are file:
// URIs.
func fileURI(file string) string {
	if path.IsAbs(file) {
		return (&url.URL{Scheme: "file", Path: file}).String()
	}
	return (&url.URL{Path: file}).String()
}

// pascal turns a rule's short name into an identifier, as SARIF's rule
// names are: "apply conflict" is ApplyConflict.
func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}
