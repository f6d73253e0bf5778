package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// maxHelpLines is how many lines a command's --help may print before
// "Usage:": what the command answers, how to read its result and where its
// docs are, as kubectl apply's and wait's do. The rest is in docs/.
const maxHelpLines = 30

// commandPaths returns the arguments that reach every command under kubectl
// rv, the root's ([]) first.
func commandPaths(c *cobra.Command, path []string) [][]string {
	out := [][]string{path}
	for _, sub := range c.Commands() {
		out = append(out, commandPaths(sub, append(append([]string{}, path...), sub.Name()))...)
	}
	return out
}

// helpOf runs kubectl rv with args and --help, and returns what it prints.
func helpOf(t *testing.T, args []string) string {
	t.Helper()
	var out bytes.Buffer
	root := NewCmdRV(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	root.SetArgs(append(append([]string{}, args...), "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("kubectl rv %s --help: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

// TestHelpFitsAScreen runs --help of every command under kubectl rv and
// fails when one prints more than maxHelpLines lines before "Usage:".
func TestHelpFitsAScreen(t *testing.T) {
	paths := commandPaths(NewCmdRV(genericiooptions.IOStreams{}), nil)
	if len(paths) < 10 {
		t.Fatalf("found %d commands: the tree was not walked", len(paths))
	}
	for _, args := range paths {
		name := strings.Join(append([]string{"kubectl rv"}, args...), " ")
		help := helpOf(t, args)
		before, _, ok := strings.Cut(help, "\nUsage:\n")
		if !ok {
			t.Errorf("%s --help prints no Usage: line:\n%s", name, help)
			continue
		}
		n := strings.Count(before, "\n") + 1
		if n > maxHelpLines {
			t.Errorf("%s --help prints %d lines before Usage:, at most %d: move the rest to docs/", name, n, maxHelpLines)
		}
		t.Logf("%s: %d lines before Usage:", name, n)
	}
}

// TestHelpLinesCountsLikeATerminal holds the count to a help of known
// size, so that TestHelpFitsAScreen cannot pass by counting wrong.
func TestHelpLinesCountsLikeATerminal(t *testing.T) {
	help := helpOf(t, []string{"simulate", "list"})
	before, _, ok := strings.Cut(help, "\nUsage:\n")
	if !ok {
		t.Fatalf("no Usage: in\n%s", help)
	}
	// The Short, then a blank line.
	if n := strings.Count(before, "\n") + 1; n != 2 {
		t.Errorf("simulate list: %d lines before Usage:, want 2 (Short and a blank line):\n%s", n, before)
	}
}

// exampleInvocations returns the kubectl rv command lines of an Example:
// each "kubectl rv ..." of a line, up to a pipe, "&&", ";" or a
// redirection, as the shell would split it into words (quotes group).
func exampleInvocations(example string) [][]string {
	var out [][]string
	for _, line := range strings.Split(example, "\n") {
		for {
			_, rest, ok := strings.Cut(line, "kubectl rv ")
			if !ok {
				break
			}
			words, tail := shellWords(rest)
			out = append(out, words)
			line = tail
		}
	}
	return out
}

// shellWords splits s into words as the shell does for the simple quoting
// of examples, stopping at an unquoted |, &&, ;, > or <; tail is what is
// left after that.
func shellWords(s string) (words []string, tail string) {
	var cur strings.Builder
	var quote rune
	inWord := false
	for i, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case strings.ContainsRune("|&;><", r):
			if inWord {
				words = append(words, cur.String())
			}
			return words, s[i:]
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, ""
}

// TestHelpExamplesParse checks every example of every command's --help
// the way kubectl rv would read it before running: the command exists,
// every flag exists and takes the value given, and the arguments are
// those the command accepts. (What they print is the docs' business:
// TestDocsExamples.)
func TestHelpExamplesParse(t *testing.T) {
	paths := commandPaths(NewCmdRV(genericiooptions.IOStreams{}), nil)
	n := 0
	for _, path := range paths {
		root := NewCmdRV(genericiooptions.IOStreams{})
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, words := range exampleInvocations(c.Example) {
			n++
			line := "kubectl rv " + strings.Join(words, " ")
			fresh := NewCmdRV(genericiooptions.IOStreams{})
			ec, args, err := fresh.Find(words)
			if err != nil {
				t.Errorf("%s --help: %s: %v", c.CommandPath(), line, err)
				continue
			}
			if err := ec.ParseFlags(args); err != nil {
				t.Errorf("%s --help: %s: %v", c.CommandPath(), line, err)
				continue
			}
			if err := ec.ValidateArgs(ec.Flags().Args()); err != nil {
				t.Errorf("%s --help: %s: %v", c.CommandPath(), line, err)
			}
		}
	}
	if n < 40 {
		t.Errorf("read %d examples: the examples were not found", n)
	}
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in, tail string
		words    []string
	}{
		{"owners deploy/web --field '.spec.a[name=x]'", "", []string{"owners", "deploy/web", "--field", ".spec.a[name=x]"}},
		{`conflicts --audit-log - | jq .`, "| jq .", []string{"conflicts", "--audit-log", "-"}},
		{"conflicts --scenario hot.yaml && kubectl rv simulate run hot.yaml", "&& kubectl rv simulate run hot.yaml", []string{"conflicts", "--scenario", "hot.yaml"}},
		{`etcdctl -w json put k1 "a b"`, "", []string{"etcdctl", "-w", "json", "put", "k1", "a b"}},
		{"lag -A > out.txt", "> out.txt", []string{"lag", "-A"}},
	}
	for _, tt := range tests {
		words, tail := shellWords(tt.in)
		if strings.Join(words, "\x00") != strings.Join(tt.words, "\x00") || tail != tt.tail {
			t.Errorf("shellWords(%q) = %q, %q; want %q, %q", tt.in, words, tail, tt.words, tt.tail)
		}
	}
}
