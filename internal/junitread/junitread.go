// Package junitread reads the JUnit XML the CI formats print (-o junit):
// the one reader of the tests that check it, from cireport's own to the
// e2e tests of each command.
package junitread

import (
	"encoding/xml"
	"fmt"
)

// Report is a <testsuites> document.
type Report struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is a <testsuite>.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is a <testcase>: a failure, a skip, or neither.
type Case struct {
	Name      string   `xml:"name,attr"`
	ClassName string   `xml:"classname,attr"`
	File      string   `xml:"file,attr"`
	Failure   *Failure `xml:"failure"`
	Skipped   *Skipped `xml:"skipped"`
	SystemOut string   `xml:"system-out"`
}

// Failure is a <failure>.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skipped is a <skipped>.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// Read parses b, which must be a <testsuites> document.
func Read(b []byte) (Report, error) {
	var r Report
	if err := xml.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("JUnit: %w", err)
	}
	return r, nil
}
