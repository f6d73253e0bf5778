// Package cireport renders findings in the formats CI systems read: GitHub
// Actions workflow commands (annotations on a pull request's diff), JUnit
// XML (GitLab's and Jenkins' test reports) and SARIF 2.1.0 (code
// scanning).
//
// Its model is format-neutral and small, so that every command with
// findings (predict, owners, doctor, lag, churn, conflicts, leases) can
// fill it: a Report holds the Rules (the kinds of finding, each with a
// help text and a one-line fix) and Groups of Cases (the testcase units:
// an object and a write method for predict, a type and a check for
// doctor, an object for lag, a finding kind for churn). A Case holds its
// Findings, or the reason it was skipped, each finding with a level, a
// message, the object it is about (its logical location, TYPE/NS/NAME,
// or TYPE for a finding about a whole type) and, where one is known, a
// file and a line and column in it; a position of rendered output (helm
// template, a kustomize build) names the template the object came from,
// which is the file a pull request changes.
//
// The writers only render: they escape what they write for where it goes
// (the workflow-command rules, XML, JSON), and do not decide levels,
// paths or positions. The command layer makes paths relative to the
// working directory and chooses each finding's level from its --fail-on
// policy, so that -o changes what is printed and never the exit code.
package cireport
