// Package findings is the one findings policy of the commands. An engine
// counts what it found by class (a fight, a self-loop, a predicted 409);
// --fail-on names the classes that end the command with exit code 1. A
// command's Vocabulary turns the flag into a Policy once (as kubectl wait
// turns --for into a condition), and the exit code comes from that
// Policy (Exit), with one wording for every command.
//
// It imports nothing of kubectl-rv but exitcode and text, so engines may
// name their classes and commands may hold policies.
package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Class is one kind of finding.
type Class struct {
	// Name is the word --fail-on takes: "fight".
	Name string
	// Noun counts it in the summary: "fight" gives "2 fights".
	Noun string
	// Help says what it is, for --help: "two managers took a field from each other".
	Help string
}

// The words every vocabulary has besides its classes.
const (
	// Any is every class.
	Any = "any"
	// None is no class: the command never exits 1 for a finding.
	None = "none"
)

// Vocabulary is the classes of one command's findings.
type Vocabulary []Class

// Words are what --fail-on accepts: the classes, any and none.
func (v Vocabulary) Words() []string {
	out := make([]string, 0, len(v)+2)
	for _, c := range v {
		out = append(out, c.Name)
	}
	return append(out, Any, None)
}

// Help is the flag's help text: what each word fails on.
func (v Vocabulary) Help(def string) string {
	var b strings.Builder
	b.WriteString("Exit 1 when the report has a finding of these classes, comma separated: ")
	for i, c := range v {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s)", c.Name, c.Help)
	}
	b.WriteString("; any (every class); none (never)")
	if def != "" {
		fmt.Fprintf(&b, ". Default: %s", def)
	}
	return b.String() + "."
}

// Policy is a parsed --fail-on: the classes that end the command with
// exit 1. The zero Policy fails on nothing.
type Policy struct {
	flag, value string
	fail        map[string]bool
}

// Parse reads the value of flag (the flag's name, "--fail-on"): class
// names, any or none, comma separated. An empty value is none. A word
// that is none of them is a usage error naming the flag and the words.
func (v Vocabulary) Parse(flag, value string) (Policy, error) {
	p := Policy{flag: flag, value: value, fail: map[string]bool{}}
	if value == "" {
		return p, nil
	}
	for _, w := range strings.Split(value, ",") {
		w = strings.TrimSpace(w)
		switch i := slices.IndexFunc(v, func(c Class) bool { return c.Name == w }); {
		case w == Any:
			for _, c := range v {
				p.fail[c.Name] = true
			}
		case w == None:
		case i >= 0:
			p.fail[w] = true
		default:
			return Policy{}, exitcode.Usagef("%s %q: use %s", flag, text.Escape(value), orList(v.Words()))
		}
	}
	return p, nil
}

// None reports whether p fails on no class (--fail-on none, or not given).
func (p Policy) None() bool { return len(p.fail) == 0 }

// Fails reports whether class is one p ends the command on.
func (p Policy) Fails(class string) bool { return p.fail[class] }

// Counts are a report's findings by class name.
type Counts map[string]int

// Exit is the command's finding, exit code 1, when counts has a finding
// of a class p fails on: "2 fights found (--fail-on fight)", counting
// each class p fails on, in v's order; nil otherwise.
func (p Policy) Exit(v Vocabulary, counts Counts) error {
	var found []string
	hit := false
	for _, c := range v {
		if !p.fail[c.Name] {
			continue
		}
		found = append(found, text.Plural(counts[c.Name], c.Noun))
		hit = hit || counts[c.Name] > 0
	}
	if !hit {
		return nil
	}
	return exitcode.Findingf("%s found (%s %s)", andList(found), p.flag, p.value)
}

func orList(words []string) string {
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func andList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
