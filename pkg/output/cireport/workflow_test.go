package cireport

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// workflowCommand is a workflow command as the GitHub Actions runner
// reads one (ActionCommand.TryParseV2): "::name k=v,k=v::data" after
// leading white space, its properties and data unescaped.
type workflowCommand struct {
	name  string
	props map[string]string
	data  string
}

// runnerCommands are the commands the runner knows; a line naming
// another is printed as it is.
var runnerCommands = map[string]bool{
	"error": true, "warning": true, "notice": true, "debug": true, "group": true, "endgroup": true,
	"add-mask": true, "stop-commands": true, "echo": true, "set-output": true, "save-state": true,
	"add-matcher": true, "remove-matcher": true, "set-env": true, "add-path": true,
}

var (
	runnerUnescapeData     = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%")
	runnerUnescapeProperty = strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
)

// parseWorkflow reads out as the runner does, line by line, and returns
// its commands and its other lines. It fails t on a line that holds
// "##[" (the runner's older command syntax, read anywhere in a line) and
// on groups that do not nest.
func parseWorkflow(t testing.TB, out string) (cmds []workflowCommand, plain []string) {
	t.Helper()
	open := false
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" && out == "" {
			break
		}
		if strings.Contains(line, "##[") {
			t.Fatalf("line holds the runner's old command prefix: %q", line)
		}
		c, ok := parseCommand(line)
		if !ok {
			plain = append(plain, line)
			continue
		}
		switch c.name {
		case "group":
			if open {
				t.Fatalf("group inside a group: %q", line)
			}
			open = true
		case "endgroup":
			if !open {
				t.Fatalf("endgroup without group: %q", line)
			}
			open = false
		}
		cmds = append(cmds, c)
	}
	if open {
		t.Fatal("group not closed")
	}
	return cmds, plain
}

func parseCommand(line string) (workflowCommand, bool) {
	msg := strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(msg, "::") {
		return workflowCommand{}, false
	}
	end := strings.Index(msg[2:], "::")
	if end < 0 {
		return workflowCommand{}, false
	}
	info := msg[2 : 2+end]
	c := workflowCommand{props: map[string]string{}, data: runnerUnescapeData.Replace(msg[4+end:])}
	name, props, _ := strings.Cut(info, " ")
	c.name = name
	if !runnerCommands[name] {
		return workflowCommand{}, false
	}
	for _, p := range strings.Split(strings.TrimSpace(props), ",") {
		if k, v, ok := strings.Cut(p, "="); ok && k != "" {
			c.props[k] = runnerUnescapeProperty.Replace(v)
		}
	}
	return c, true
}

// FuzzGitHub renders a finding of any text and reads it back as the
// runner does: one group, one annotation, nothing else, with the
// properties and the message as written (terminal-escaped; the runner
// trims the white space that ends the last property, the title).
func FuzzGitHub(f *testing.F) {
	f.Add("web", "apply", "conflicts on .spec.replicas", "web.yaml", "a:b")
	f.Add("::group::x", "%0A", "a\n::error::b\r\n##[error]c%25", "d,e:f=g", "x\x1b]0;t\a")
	f.Fuzz(func(t *testing.T, group, kase, msg, file, name string) {
		o := Object{Type: "Deployment", Name: name}
		r := Report{Command: "predict", Rules: []Rule{{ID: "r", Name: "rule"}}, Groups: []Group{{Name: group, Cases: []Case{{Name: kase, Findings: []Finding{
			{Rule: "r", Level: Error, Object: o, Message: msg, Location: Location{File: file, Line: 3, Column: 5}},
		}}}}}}
		var b bytes.Buffer
		if err := WriteGitHub(&b, r); err != nil {
			t.Fatal(err)
		}
		cmds, plain := parseWorkflow(t, b.String())
		if len(cmds) != 3 || len(plain) != 0 {
			t.Fatalf("want group, error, endgroup; got %d commands and %q\n%s", len(cmds), plain, b.String())
		}
		e := cmds[1]
		if e.name != "error" {
			t.Fatalf("annotation is %q", e.name)
		}
		// The case follows the object unless it names the group, the
		// object or the rule.
		about := o.String() + " " + kase
		if kase == "" || kase == group || kase == name || kase == "rule" {
			about = o.String()
		}
		want := map[string]string{"file": ghLine(file), "line": "3", "col": "5",
			"title": strings.TrimRightFunc(ghLine("rule: "+about), unicode.IsSpace)}
		wantData := ghText(msg)
		if file == "" {
			want = map[string]string{"title": want["title"]}
			wantData = ghText(msg + " [<stdin>:3:5]")
		}
		if diff := cmp.Diff(want, e.props); diff != "" || e.data != wantData {
			t.Fatalf("read back %+v (-want +got):\n%s\nfrom %q", e, diff, b.String())
		}
		if cmds[0].data != ghText("predict: "+group) {
			t.Fatalf("group %q, want %q", cmds[0].data, ghText("predict: "+group))
		}
	})
}

// FuzzJUnit renders a failing case of any text and reads it back with
// encoding/xml: it parses, counts one failure, and keeps the message
// (terminal-escaped; what XML cannot hold replaced by U+FFFD).
func FuzzJUnit(f *testing.F) {
	f.Add("web", "apply", "conflicts on .spec.replicas", "web.yaml")
	f.Add("<a>&", "]]>", "a\x00b\r\n\uffff\"'", "\xff")
	f.Fuzz(func(t *testing.T, group, kase, msg, file string) {
		r := Report{Command: "predict", Groups: []Group{{Name: group, Cases: []Case{{Name: kase, Findings: []Finding{
			{Rule: "r", Level: Error, Message: msg, Location: Location{File: file, Line: 1}},
		}}}}}}
		var b bytes.Buffer
		if err := WriteJUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		var rep JUnitReport
		if err := xml.Unmarshal(b.Bytes(), &rep); err != nil {
			t.Fatalf("not XML: %v\n%s", err, b.String())
		}
		if rep.Tests != 1 || rep.Failures != 1 || len(rep.Suites) != 1 || len(rep.Suites[0].Cases) != 1 {
			t.Fatalf("counts %+v", rep)
		}
		c := rep.Suites[0].Cases[0]
		if c.Failure == nil || c.Failure.Message != xmlSafe(junitText(msg)) || c.Name != xmlSafe(junitText(kase)) || rep.Suites[0].Name != xmlSafe(junitText(group)) {
			t.Fatalf("read back %+v\nfrom %q", c, b.String())
		}
	})
}

// xmlSafe is s as encoding/xml writes it: U+FFFE and U+FFFF, which XML
// does not allow, become U+FFFD.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0xfffe || r == 0xffff {
			return 0xfffd
		}
		return r
	}, s)
}
