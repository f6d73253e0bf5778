package cireport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

var web = Object{Type: "Deployment", Namespace: "shop", Name: "web"}

// sample has every kind of location: a field in a file, an object's
// first line, a template position with and without a rendered file, a
// line of standard input, none; a passing case; and text that needs
// escaping in every format.
func sample() Report {
	return Report{
		Tool:    Tool{Name: "kubectl-rv", Version: "v0.1.0", InformationURI: "https://github.com/kubectl-rv/kubectl-rv"},
		Command: "predict",
		Rules: []Rule{
			{ID: "predict/apply-conflict", Name: "apply conflict", Help: "A server-side apply without force would be refused with a 409: another manager owns the field.", Fix: "give each field one owner, or apply with force=true if this manager should take the fields"},
			{ID: "predict/clobber", Name: "clobber", Help: "The write succeeds, but overwrites or removes fields other managers own.", Fix: "apply with server-side apply, or drop the fields other managers own from the manifest"},
		},
		Groups: []Group{
			{Name: web.String(), Cases: []Case{
				{Name: "apply", Findings: []Finding{
					{Rule: "predict/apply-conflict", Level: Error, Object: web, Message: `conflicts on .spec.replicas, owned by "kubectl" (Update, subresource scale)`,
						Location: Location{File: "deploy/web.yaml", Line: 7, Column: 3}},
				}},
				{Name: "update-no-rv", Findings: []Finding{
					{Rule: "predict/clobber", Level: Warning, Object: web, Message: `takes .spec.replicas from "kubectl"`,
						Location: Location{File: "deploy/web.yaml", Line: 7, Column: 3}},
					{Rule: "predict/clobber", Level: Warning, Object: web, Message: "removes .metadata.labels[\"a,b:c\"] from \"evil%0A::error::x\nline two\x1b[31m ##[error]\"",
						Location: Location{File: "deploy/web.yaml", Line: 4}},
				}},
				{Name: "merge-patch"},
			}},
			{Name: "ConfigMap/shop/<cfg&\"x\">", Cases: []Case{
				{Name: "apply", Findings: []Finding{
					{Rule: "predict/apply-conflict", Level: Error, Object: Object{Type: "ConfigMap", Namespace: "shop", Name: `<cfg&"x">`}, Message: "conflicts on .data.k, owned by \"helm\"",
						Location: Location{File: "out.yaml", Line: 12, Column: 3, Template: "chart/templates/cm.yaml", TemplateTool: "helm"}},
				}},
				{Name: "apply-force", Findings: []Finding{
					{Rule: "predict/apply-conflict", Level: Note, Object: Object{Type: "ConfigMap", Namespace: "shop", Name: `<cfg&"x">`}, Message: "from standard input, rendered",
						Location: Location{Line: 3, Template: "base/cm.yaml", TemplateTool: "kustomize"}},
				}},
			}},
			{Name: "Namespace/shop", Cases: []Case{
				{Name: "apply", Findings: []Finding{
					{Rule: "predict/clobber", Level: Error, Object: Object{Type: "Namespace", Name: "shop"}, Message: "from standard input", Location: Location{Line: 2, Column: 1}},
					{Rule: "predict/unlisted", Level: Error, Object: Object{Type: "Namespace", Name: "shop"}, Message: "about the cluster"},
					{Rule: "predict/clobber", Level: Warning, Object: Object{Type: "Namespace", Name: "shop"}, Message: "in a file, line unknown", Location: Location{File: "ns.yaml"}},
				}},
			}},
		},
	}
}

func render(t *testing.T, f output.Format, r Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, f, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, f := range output.CIFormats {
		t.Run(string(f), func(t *testing.T) {
			ext := map[output.Format]string{output.GitHub: "txt", output.JUnit: "xml", output.SARIF: "sarif"}[f]
			golden.Assert(t, "sample."+ext, render(t, f, sample()))
			golden.Assert(t, "empty."+ext, render(t, f, Report{Tool: Tool{Name: "kubectl-rv"}, Command: "predict"}))
		})
	}
}

// TestSARIFSchema validates the SARIF output against the published SARIF
// 2.1.0 schema, for the sample and for a report with no findings.
func TestSARIFSchema(t *testing.T) {
	for name, r := range map[string]Report{"sample": sample(), "empty": {Tool: Tool{Name: "kubectl-rv"}, Command: "predict"}} {
		if err := sarifcheck.Validate(render(t, output.SARIF, r)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSARIFLocations reads the SARIF back: the file finding has its file
// and region, the template finding the template without a region and the
// rendered line as a related location, the standard-input finding only
// its logical location; every result has the object's TYPE/NS/NAME.
func TestSARIFLocations(t *testing.T) {
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI string } `json:"artifactLocation"`
						Region           *struct{ StartLine, StartColumn int }
					} `json:"physicalLocation"`
					LogicalLocations []struct{ FullyQualifiedName string } `json:"logicalLocations"`
				}
				RelatedLocations []json.RawMessage `json:"relatedLocations"`
			}
		}
	}
	if err := json.Unmarshal(render(t, output.SARIF, sample()), &log); err != nil {
		t.Fatal(err)
	}
	type got struct {
		URI               string
		Line, Col, Rel    int
		Logical           string
		RuleIndexRecorded bool
	}
	var gots []got
	for _, res := range log.Runs[0].Results {
		l := res.Locations[0]
		g := got{Logical: l.LogicalLocations[0].FullyQualifiedName, Rel: len(res.RelatedLocations), RuleIndexRecorded: res.RuleIndex != nil}
		if p := l.PhysicalLocation; p != nil {
			g.URI = p.ArtifactLocation.URI
			if p.Region != nil {
				g.Line, g.Col = p.Region.StartLine, p.Region.StartColumn
			}
		}
		gots = append(gots, g)
	}
	want := []got{
		{"deploy/web.yaml", 7, 3, 0, "Deployment/shop/web", true},
		{"deploy/web.yaml", 7, 3, 0, "Deployment/shop/web", true},
		{"deploy/web.yaml", 4, 0, 0, "Deployment/shop/web", true},
		{"chart/templates/cm.yaml", 0, 0, 1, `ConfigMap/shop/<cfg&"x">`, true},
		{"base/cm.yaml", 0, 0, 0, `ConfigMap/shop/<cfg&"x">`, true},
		{"", 0, 0, 0, "Namespace/shop", true},
		{"", 0, 0, 0, "Namespace/shop", false},
		{"ns.yaml", 0, 0, 0, "Namespace/shop", true},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// JUnitReport is the JUnit XML as a report parser reads it.
type JUnitReport junitread.Report

// TestJUnitReadsBack parses the JUnit XML: the counts, the failing cases
// and their failures (a finding about the cluster at its object), the
// warnings of a passing case in its output, the hostile text of a message
// kept (markup) or made visible (ESC).
func TestJUnitReadsBack(t *testing.T) {
	var rep JUnitReport
	if err := xml.Unmarshal(render(t, output.JUnit, sample()), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tests != 6 || rep.Failures != 3 || len(rep.Suites) != 3 {
		t.Fatalf("tests=%d failures=%d suites=%d, want 6, 3, 3", rep.Tests, rep.Failures, len(rep.Suites))
	}
	web := rep.Suites[0]
	if web.Name != "Deployment/shop/web" || web.Tests != 3 || web.Failures != 1 {
		t.Errorf("suite %+v", web)
	}
	apply := web.Cases[0]
	if apply.Failure == nil || apply.Failure.Type != "predict/apply-conflict" || apply.File != "deploy/web.yaml" ||
		!strings.HasPrefix(apply.Failure.Text, "deploy/web.yaml:7:3: error: conflicts on .spec.replicas") {
		t.Errorf("apply case %+v", apply)
	}
	clobber := web.Cases[1]
	if clobber.Failure != nil || !strings.Contains(clobber.SystemOut, "warning: takes .spec.replicas") || !strings.Contains(clobber.SystemOut, "line two^[[31m") {
		t.Errorf("update-no-rv case %+v", clobber)
	}
	if ns := rep.Suites[2].Cases[0]; !strings.HasSuffix(ns.Failure.Text, "\nNamespace/shop: error: about the cluster") {
		t.Errorf("a finding about the cluster is not at its object: %q", ns.Failure.Text)
	}
	cm := rep.Suites[1]
	if cm.Name != `ConfigMap/shop/<cfg&"x">` || cm.Cases[0].File != "chart/templates/cm.yaml" ||
		!strings.HasPrefix(cm.Cases[0].Failure.Text, "chart/templates/cm.yaml (helm template; rendered out.yaml:12:3): error:") {
		t.Errorf("template suite %+v", cm)
	}
}

// TestGitHubCommands parses the workflow commands as the runner does:
// each group closed, each annotation with its properties, the hostile
// text of a message unable to start a command of its own.
func TestGitHubCommands(t *testing.T) {
	cmds, plain := parseWorkflow(t, string(render(t, output.GitHub, sample())))
	var got []string
	for _, c := range cmds {
		got = append(got, c.name+" "+c.props["file"]+" "+c.props["line"]+" "+c.props["col"])
	}
	want := []string{
		"group   ",
		"error deploy/web.yaml 7 3",
		"warning deploy/web.yaml 7 3",
		"warning deploy/web.yaml 4 ",
		"endgroup   ",
		"group   ",
		"error chart/templates/cm.yaml  ",
		"notice base/cm.yaml  ",
		"endgroup   ",
		"group   ",
		"error   ",
		"error   ",
		"warning ns.yaml  ",
		"endgroup   ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ok: Deployment/shop/web merge-patch"}, plain); diff != "" {
		t.Errorf("plain lines (-want +got):\n%s", diff)
	}
	hostile := cmds[3]
	if !strings.Contains(hostile.data, "evil%0A::error::x\nline two^[[31m #\u200b#[error]") || hostile.props["title"] != "clobber: Deployment/shop/web update-no-rv" {
		t.Errorf("hostile message read back as %+v", hostile)
	}
	if tmpl := cmds[6]; !strings.Contains(tmpl.data, "[chart/templates/cm.yaml (helm template; rendered out.yaml:12:3)]") {
		t.Errorf("template message %q", tmpl.data)
	}
	if stdin := cmds[10]; !strings.Contains(stdin.data, "[<stdin>:2:1]") {
		t.Errorf("standard input message %q", stdin.data)
	}
}

// TestTypesAndSkippedCases: a finding about a whole type (doctor's) is
// located at the type alone; a case that is the object itself (lag's), or
// named as its rule is (doctor's), is not repeated after it; a skipped case is a JUnit <skipped> with its
// reason, a "skipped:" line on GitHub, and no SARIF result.
func TestTypesAndSkippedCases(t *testing.T) {
	cm := Object{Type: "configmaps"}
	web := Object{Type: "deployments.apps", Namespace: "shop", Name: "web"}
	r := Report{Tool: Tool{Name: "kubectl-rv"}, Command: "doctor", Rules: []Rule{{ID: "doctor/items-have-rv", Name: "items-have-rv"}}, Groups: []Group{{Name: "configmaps", Cases: []Case{
		{Name: "paging", Skipped: "1 item: nothing to page"},
		{Name: "items-have-rv", Findings: []Finding{{Rule: "doctor/items-have-rv", Level: Error, Object: cm, Message: "no resourceVersion"}}},
		{Name: "shop/web", Findings: []Finding{{Rule: "lag/paused", Level: Warning, Object: web, Message: "paused"}}},
	}}}}
	gh := string(render(t, output.GitHub, r))
	for _, want := range []string{
		"skipped: configmaps paging: 1 item: nothing to page\n",
		"::error title=items-have-rv%3A configmaps::no resourceVersion\n",
		"::warning title=lag/paused%3A deployments.apps/shop/web::paused\n",
	} {
		if !strings.Contains(gh, want) {
			t.Errorf("-o github lacks %q:\n%s", want, gh)
		}
	}
	var rep junitread.Report
	if err := xml.Unmarshal(render(t, output.JUnit, r), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Suites[0]; s.Skipped != 1 || s.Cases[0].Skipped == nil || s.Cases[0].Skipped.Message != "1 item: nothing to page" || s.Cases[1].Skipped != nil {
		t.Errorf("junit skipped: %+v", s)
	}
	sarif := render(t, output.SARIF, r)
	if err := sarifcheck.Validate(sarif); err != nil {
		t.Error(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message   struct{ Text string }
				Locations []struct {
					LogicalLocations []struct{ Name, FullyQualifiedName string } `json:"logicalLocations"`
				}
			}
		}
	}
	if err := json.Unmarshal(sarif, &log); err != nil {
		t.Fatal(err)
	}
	type got struct{ Msg, Name, FQN string }
	var gots []got
	for _, res := range log.Runs[0].Results {
		l := res.Locations[0].LogicalLocations[0]
		gots = append(gots, got{res.Message.Text, l.Name, l.FullyQualifiedName})
	}
	want := []got{
		{"configmaps: no resourceVersion", "configmaps", "configmaps"},
		{"deployments.apps/shop/web: paused", "web", "deployments.apps/shop/web"},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("sarif results (-want +got):\n%s", diff)
	}
}

// TestGitHubCaseNamedAsItsGroup: a group per finding kind with one case
// of the same name (churn's, conflicts', leases') names the kind once,
// in the ok line and in an annotation's title.
func TestGitHubCaseNamedAsItsGroup(t *testing.T) {
	r := Report{Command: "churn", Rules: []Rule{{ID: "churn/fight", Name: "fight"}}, Groups: []Group{
		{Name: "self-loop", Cases: []Case{{Name: "self-loop"}}},
		{Name: "fight", Cases: []Case{{Name: "fight", Findings: []Finding{{Rule: "churn/fight", Level: Error, Object: web, Message: "m"}}}}},
	}}
	cmds, plain := parseWorkflow(t, string(render(t, output.GitHub, r)))
	if diff := cmp.Diff([]string{"ok: self-loop"}, plain); diff != "" {
		t.Errorf("plain lines (-want +got):\n%s", diff)
	}
	if title := cmds[3].props["title"]; title != "fight: Deployment/shop/web" {
		t.Errorf("title %q", title)
	}
}
