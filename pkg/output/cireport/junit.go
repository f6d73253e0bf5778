package cireport

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// The JUnit XML elements, as GitLab's and Jenkins' report parsers read
// them: testsuites > testsuite > testcase, the counts in attributes, a
// failure with a message attribute, a type and a text.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		File      string        `xml:"file,attr,omitempty"`
		Failure   *junitFailure `xml:"failure"`
		Skipped   *junitSkipped `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes r as JUnit XML: a testsuite per Group, a testcase per
// Case (classname the group, name the case). A case fails when it has a
// finding of level Error: one <failure> holds them all (JUnit allows one
// per testcase, and Jenkins reads only the first), its message the first
// finding's, its type the first finding's rule, its text every finding
// with its location and the rule's fix. Findings of lower levels go to the
// case's <system-out>, so the case passes but the report keeps them. A
// skipped case has <skipped message="why"/>.
func WriteJUnit(w io.Writer, r Report) error {
	out := junitSuites{Name: "kubectl-rv " + r.Command}
	for _, g := range r.Groups {
		s := junitSuite{Name: junitText(g.Name)}
		for _, c := range g.Cases {
			jc := junitTestcase(r, g, c)
			s.Tests++
			if jc.Failure != nil {
				s.Failures++
			}
			if jc.Skipped != nil {
				s.Skipped++
			}
			s.Cases = append(s.Cases, jc)
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encoding junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitTestcase renders one case.
func junitTestcase(r Report, g Group, c Case) junitCase {
	jc := junitCase{Name: junitText(c.Name), ClassName: junitText(g.Name)}
	if c.Skipped != "" {
		jc.Skipped = &junitSkipped{Message: junitText(c.Skipped)}
	}
	var failed, other []string
	for _, f := range c.Findings {
		if jc.File == "" {
			jc.File = junitText(fileOf(f.Location))
		}
		line := junitLine(r, f)
		if f.Level != Error {
			other = append(other, line)
			continue
		}
		if jc.Failure == nil {
			jc.Failure = &junitFailure{Message: junitText(f.Message), Type: f.Rule}
		}
		failed = append(failed, line)
	}
	if jc.Failure != nil {
		jc.Failure.Text = strings.Join(failed, "\n")
	}
	jc.SystemOut = strings.Join(other, "\n")
	return jc
}

// junitLine is a finding in the failure's or the output's text:
// "web.yaml:7:3: error: message (fix: ...)"; a finding about the cluster,
// with no place in a file, is at its object: "Deployment/shop/web:
// error: message (fix: ...)".
func junitLine(r Report, f Finding) string {
	at := where(f.Location)
	if at == "" {
		at = f.Object.String()
	}
	s := at + ": " + string(f.Level) + ": " + f.Message
	if rule, _ := r.rule(f.Rule); rule.Fix != "" {
		s += " (fix: " + rule.Fix + ")"
	}
	return junitText(s)
}

// fileOf is the file a pull request changes for l: the template, or the
// file read.
func fileOf(l Location) string {
	if l.Template != "" {
		return l.Template
	}
	return l.File
}

// junitText keeps s's line breaks and escapes the rest for a terminal, as
// the report is also read in job logs; encoding/xml escapes the markup
// and replaces what XML does not allow.
func junitText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.Escape(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}
