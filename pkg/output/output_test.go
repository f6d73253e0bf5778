package output

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
)

func sampleTable() *TableData {
	t := &TableData{Columns: []Column{{Name: "Name"}, {Name: "Manager"}, {Name: "RV", Wide: true}, {Name: "Age"}}}
	t.AddRow(Cells("web", "kubectl-client-side-apply", "1234", "5m")...)
	t.AddRow(Cell{Text: "api"}, Cell{Text: "kube-controller-manager", Style: Red}, Cell{Text: "99"}, Cell{Text: "10s"})
	t.AddRow(Cells("evil", "mgr\x1b]0;pwned\x07", "7", "1h")...)
	return t
}

func TestRenderTable(t *testing.T) {
	tests := []struct {
		name    string
		printer Printer
		golden  string
	}{
		{"plain", Printer{Format: Table}, "table.txt"},
		{"wide shows wide columns", Printer{Format: Wide}, "table-wide.txt"},
		{"no headers", Printer{Format: Table, NoHeaders: true}, "table-noheaders.txt"},
		{"color", Printer{Format: Table, Color: true}, "table-color.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden.Assert(t, tt.golden, tt.printer.RenderTable(sampleTable()))
		})
	}
}

func TestTableEscapesServerStrings(t *testing.T) {
	tests := []struct{ name, manager, raw, shown string }{
		{"ESC and BEL (OSC)", "mgr\x1b]0;pwned\x07", "\x1b\x07", "mgr^[]0;pwned^G"},
		{"C1 CSI", "mgr\u009b31mred", "\u009b", `mgr\u009b31mred`},
		{"C1 OSC", "mgr\u009d0;pwned\u009c", "\u009d\u009c", `mgr\u009d0;pwned\u009c`},
		{"right-to-left override", "mgr\u202eredro", "\u202e", `mgr\u202eredro`},
		{"isolate and mark", "\u2067mgr\u2069\u200f", "\u2067\u2069\u200f", `\u2067mgr\u2069\u200f`},
		{"a lone 8-bit CSI byte", "mgr\x9b1m", "", `mgr\x9b1m`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := &TableData{Columns: Columns("name", "manager")}
			tbl.AddRow(Cells("web", tt.manager)...)
			out := (&Printer{Format: Table}).RenderTable(tbl)
			if bytes.ContainsAny(out, tt.raw) || !utf8.Valid(out) {
				t.Errorf("terminal controls reached the output: %q", out)
			}
			if !bytes.Contains(out, []byte(tt.shown)) {
				t.Errorf("the table does not show %q: %q", tt.shown, out)
			}
		})
	}
}

func TestPrintObject(t *testing.T) {
	type report struct {
		TypeMeta `json:",inline"`
		Items    []string `json:"items"`
	}
	obj := report{TypeMeta: NewTypeMeta("Sample"), Items: []string{"a", "b"}}
	for _, f := range []Format{JSON, YAML} {
		var buf bytes.Buffer
		p := &Printer{Format: f, Out: &buf}
		if err := p.PrintObject(obj); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "object."+string(f), buf.Bytes())
	}
}

func TestUseColor(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	var buf bytes.Buffer
	tests := []struct {
		name string
		mode ColorMode
		env  string
		want bool
	}{
		{"always wins over NO_COLOR", ColorAlways, "1", true},
		{"never", ColorNever, "", false},
		{"auto on a buffer is off", ColorAuto, "", false},
		{"auto with NO_COLOR is off", ColorAuto, "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UseColor(tt.mode, &buf, env(tt.env)); got != tt.want {
				t.Errorf("UseColor = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWarnf(t *testing.T) {
	var buf bytes.Buffer
	Warnf(&buf, "%s has no managedFields; skipped", "ConfigMap x\x1b]0;t\x07")
	if got, want := buf.String(), "warning: ConfigMap x^[]0;t^G has no managedFields; skipped\n"; got != want {
		t.Errorf("Warnf wrote %q, want %q", got, want)
	}
}

func TestDuration(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{Duration(2652501147 * time.Nanosecond), "3s"},
		{Duration(1996 * time.Millisecond), "2s"},
		{Duration(5*time.Minute + 10*time.Second), "5m10s"},
		{Duration(2 * time.Minute), "2m"},
		{Duration(0), "0s"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
