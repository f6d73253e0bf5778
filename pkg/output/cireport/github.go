package cireport

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// WriteGitHub writes r as GitHub Actions workflow commands: a log group
// per Group ("::group::" ... "::endgroup::"), in it a line per passing
// case, a "skipped:" line with its reason per skipped case, and an
// annotation per finding ("::error file=F,line=L,col=C,
// title=T::message", "::warning", "::notice"), which the runner shows on
// the pull request's diff at that line. A finding at a template position
// annotates the template as a whole (its line is one of rendered output);
// one without a file (standard input) annotates the run.
//
// Every string is escaped as GitHub's toolkit escapes it (% CR LF in the
// message, and : , in properties too) after the terminal escaping
// (text.Escape, line by line in a message, whole in a property), so that no text from a file or a server
// can end the line and start a command of its own.
func WriteGitHub(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	for _, g := range r.Groups {
		bw.WriteString("::group::" + ghData(r.Command+": "+g.Name) + "\n")
		for _, c := range g.Cases {
			switch {
			case c.Skipped != "":
				bw.WriteString("skipped: " + ghData(caseLabel(g.Name, g, c)+": "+c.Skipped) + "\n")
				continue
			case len(c.Findings) == 0:
				bw.WriteString("ok: " + ghData(caseLabel(g.Name, g, c)) + "\n")
				continue
			}
			for _, f := range c.Findings {
				ghFinding(bw, r, g, c, f)
			}
		}
		bw.WriteString("::endgroup::\n")
	}
	return bw.Flush()
}

// caseLabel is what names case c of group g in a line: what, then the
// case's name, unless the case is named as its group (a group with one
// case per finding kind, as churn's), which would say it twice.
func caseLabel(what string, g Group, c Case) string {
	if c.Name == g.Name {
		return what
	}
	return what + " " + c.Name
}

// ghFinding writes one annotation.
func ghFinding(bw *bufio.Writer, r Report, g Group, c Case, f Finding) {
	rule, _ := r.rule(f.Rule)
	name := rule.Name
	if name == "" {
		name = f.Rule
	}
	var props []string
	l := f.Location
	msg := f.Message
	switch {
	case l.Template != "":
		props = append(props, "file="+ghProperty(l.Template))
		msg += " [" + where(l) + "]"
	case l.File != "":
		props = append(props, "file="+ghProperty(l.File))
		if l.Known() {
			props = append(props, "line="+strconv.Itoa(l.Line))
		}
		if l.Known() && l.Column > 0 {
			props = append(props, "col="+strconv.Itoa(l.Column))
		}
	case l.Known():
		msg += " [" + where(l) + "]"
	}
	props = append(props, "title="+ghProperty(name+": "+r.about(g, c, f)))
	if rule.Fix != "" {
		msg += "\nFix: " + rule.Fix
	}
	bw.WriteString("::" + ghCommand(f.Level) + " " + strings.Join(props, ",") + "::" + ghData(msg) + "\n")
}

// ghCommand is the workflow command of a level.
func ghCommand(l Level) string {
	switch l {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "notice"
}

// ghText escapes s for a terminal line by line, keeping its line breaks
// (which the workflow escaping then encodes), and breaks up "##[".
func ghText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = text.Escape(strings.TrimSuffix(l, "\r"))
	}
	return breakOldCommands(strings.Join(lines, "\n"))
}

// breakOldCommands breaks up "##[", the prefix of the runner's older
// command syntax, which it reads anywhere in a line, with a zero-width
// space.
func breakOldCommands(s string) string { return strings.ReplaceAll(s, "##[", "#\u200b#[") }

// ghLine escapes s for a terminal as one line: a property (a file, a
// title) has no line breaks.
func ghLine(s string) string { return breakOldCommands(text.Escape(s)) }

var (
	ghDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// ghData is s as a command's message.
func ghData(s string) string { return ghDataEscaper.Replace(ghText(s)) }

// ghProperty is s as a command's property value.
func ghProperty(s string) string { return ghPropertyEscaper.Replace(ghLine(s)) }
