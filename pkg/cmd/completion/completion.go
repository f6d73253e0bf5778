package completion

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// HelperName is the executable kubectl runs from PATH to complete the
// words after "kubectl rv" (kubectl's plugin completion, 1.26 or newer).
const HelperName = "kubectl_complete-rv"

// helperPrintf writes the helper: a shell script that hands the words to
// kubectl-rv's __complete. The same line works in sh, bash, zsh and fish.
const helperPrintf = `printf '#!/bin/sh\nexec kubectl-rv __complete "$@"\n'`

// shell is how one shell enables kubectl's completion and writes the helper.
type shell struct {
	name string
	// kubectl enables kubectl's own completion, and rc says where.
	kubectl, rc string
	// helperPath is the helper's path in krew's bin folder, in the
	// shell's syntax.
	helperPath string
}

var shells = []shell{
	{name: "bash", kubectl: "source <(kubectl completion bash)", rc: "~/.bashrc (with the bash-completion package)",
		helperPath: `"${KREW_ROOT:-$HOME/.krew}/bin/` + HelperName + `"`},
	{name: "zsh", kubectl: "source <(kubectl completion zsh)", rc: "~/.zshrc, after compinit",
		helperPath: `"${KREW_ROOT:-$HOME/.krew}/bin/` + HelperName + `"`},
	// fish has no ${VAR:-default}: the default krew root, said in words.
	{name: "fish", kubectl: "kubectl completion fish | source", rc: "~/.config/fish/config.fish",
		helperPath: "~/.krew/bin/" + HelperName},
}

func shellNamed(name string) (shell, bool) {
	i := slices.IndexFunc(shells, func(s shell) bool { return s.name == name })
	if i < 0 {
		return shell{}, false
	}
	return shells[i], true
}

// steps are the two set-up steps for s, each command line indented by
// indent.
func steps(s shell, indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "1. kubectl's own %s completion, in %s:\n", s.name, s.rc)
	fmt.Fprintf(&b, "%s%s\n\n", indent, s.kubectl)
	b.WriteString("2. The helper " + HelperName + " beside krew's plugin links")
	if s.name == "fish" {
		b.WriteString(" ($KREW_ROOT/bin\n   if you set KREW_ROOT)")
	}
	b.WriteString(":\n")
	fmt.Fprintf(&b, "%s%s > %s\n", indent, helperPrintf, s.helperPath)
	fmt.Fprintf(&b, "%schmod +x %s\n", indent, s.helperPath)
	return b.String()
}

const intro = `kubectl rv is a kubectl plugin, so it completes through kubectl (1.26 or
newer): on TAB after "kubectl rv", kubectl runs ` + HelperName + ` from
PATH, which asks kubectl-rv for the subcommands, flags, resource types and
object names. There is no "rv" command to register a completion script
for: kubectl rv completion SHELL prints these steps, as comments.
`

const outro = `Then open a new shell. Without krew, make install puts ` + HelperName + `
beside kubectl-rv, and each release archive holds it: keep the two together
on PATH, and step 2 is done.`

// NewCmdCompletion returns kubectl rv completion.
func NewCmdCompletion(_ *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	bash, _ := shellNamed("bash")
	names := make([]string, len(shells))
	for i, s := range shells {
		names[i] = s.name
	}
	return &cobra.Command{
		Use:   "completion [" + strings.Join(names, "|") + "]",
		Short: "Show how to set up shell completion of kubectl rv through kubectl",
		Long: "Show how to set up shell completion of kubectl rv through kubectl.\n\n" + intro +
			"\nAfter a krew install, for bash (zsh and fish: kubectl rv completion SHELL), once:\n\n" +
			indentLines(steps(bash, "     "), "  ") + "\n" + outro,
		Example: `  # The steps for zsh
  kubectl rv completion zsh`,
		Args:                  cobra.MaximumNArgs(1),
		ValidArgs:             names,
		Annotations:           map[string]string{cmdutil.AnnotationNoKubeconfig: "true"},
		DisableFlagsInUseLine: true,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			s, ok := shellNamed(args[0])
			if !ok {
				return exitcode.Usagef("unsupported shell %q: give %s", args[0], strings.Join(names, ", "))
			}
			return printSteps(streams.Out, s)
		},
	}
}

// printSteps writes the steps for s as shell comments: the shell
// completion scripts of other tools are sourced (source <(... completion
// bash)), and sourcing these must change nothing.
func printSteps(w io.Writer, s shell) error {
	text := intro + "\n" + steps(s, "     ") + "\n" + outro + "\n"
	_, err := io.WriteString(w, indentLines(text, "# "))
	return err
}

// indentLines puts prefix before every line of s that is not empty (before
// every line when prefix is a comment marker).
func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(prefix, "#"):
			lines[i] = strings.TrimRight(prefix+l, " ")
		case l != "":
			lines[i] = prefix + l
		}
	}
	out := strings.Join(lines, "\n")
	if strings.HasSuffix(s, "\n") {
		out += "\n"
	}
	return out
}
