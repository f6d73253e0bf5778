package watchprint

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// The kinds of the reports of kubectl rv watch --replay --list and --object, which reads a
// recording's history.
const (
	HistoryListKind = "ReplayList"
	VersionAtKind   = "ReplayObject"
	VersionDiffKind = "ReplayDiff"
)

type historyListJSON struct {
	output.TypeMeta
	inspect.HistoryList
}

type versionAtJSON struct {
	output.TypeMeta
	inspect.VersionAt
}

type versionDiffJSON struct {
	output.TypeMeta
	inspect.VersionDiff
}

// PrintHistoryList renders the objects of a recording: a table of their
// versions, or a ReplayList. An empty table is said on errOut.
func PrintHistoryList(p *output.Printer, errOut io.Writer, l inspect.HistoryList) error {
	if p.Structured() {
		return p.PrintObject(historyListJSON{TypeMeta: output.NewTypeMeta(HistoryListKind), HistoryList: l})
	}
	if len(l.Objects) == 0 {
		fmt.Fprintln(errOut, "The recording holds no objects.")
		return nil
	}
	t := &output.TableData{Columns: output.Columns("Object", "Versions", "First RV", "Last RV", "Deleted")}
	for _, h := range l.Objects {
		del := "no"
		if h.Deleted {
			del = "yes"
		}
		t.AddRow(output.Cells(h.Ref, fmt.Sprint(len(h.ResourceVersions)), h.ResourceVersions[0], h.ResourceVersions[len(h.ResourceVersions)-1], del)...)
	}
	return p.PrintTable(t)
}

// PrintVersionAt renders one object at a resourceVersion: YAML under a
// comment line, or a ReplayObject.
func PrintVersionAt(p *output.Printer, v inspect.VersionAt) error {
	if p.Structured() {
		return p.PrintObject(versionAtJSON{TypeMeta: output.NewTypeMeta(VersionAtKind), VersionAt: v})
	}
	if v.Type == follow.Deleted {
		_, err := fmt.Fprintf(p.Out, "%s was deleted at resourceVersion %s\n", text.Escape(v.Ref), text.Escape(v.ResourceVersion))
		return err
	}
	b, err := yaml.Marshal(v.Object.Object)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(p.Out, "# %s at resourceVersion %s (%s)\n", text.Escape(v.Ref), text.Escape(v.ResourceVersion), v.Type); err != nil {
		return err
	}
	// Escape line by line: the newlines are the YAML's own.
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		line, nl := strings.CutSuffix(l, "\n")
		lines[i] = text.Escape(line)
		if nl {
			lines[i] += "\n"
		}
	}
	_, err = io.WriteString(p.Out, strings.Join(lines, ""))
	return err
}

// PrintVersionDiff renders the fields that changed between two
// resourceVersions, one per line, or a ReplayDiff. No change is said on
// errOut.
func PrintVersionDiff(p *output.Printer, errOut io.Writer, d inspect.VersionDiff) error {
	if p.Structured() {
		return p.PrintObject(versionDiffJSON{TypeMeta: output.NewTypeMeta(VersionDiffKind), VersionDiff: d})
	}
	if _, err := fmt.Fprintf(p.Out, "%s: resourceVersion %s -> %s\n", text.Escape(d.Ref), text.Escape(d.From), text.Escape(d.To)); err != nil {
		return err
	}
	if len(d.Changes) == 0 {
		fmt.Fprintln(errOut, "No field changed.")
		return nil
	}
	for _, c := range d.Changes {
		if _, err := fmt.Fprintf(p.Out, "  %s\n", text.Escape(c.String())); err != nil {
			return err
		}
	}
	return nil
}
