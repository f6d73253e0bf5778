package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

const valid = `apiVersion: rv.kubectl-rv.dev/v1alpha1
kind: Scenario
name: t
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c, namespace: default}
actors:
- name: w
  target: {apiVersion: v1, kind: ConfigMap, name: c}
  method: update
  change: {increment: data.count}
  rate: 5
`

func TestParseFillsDefaults(t *testing.T) {
	s, err := Parse([]byte(valid), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{s.Seed, s.Duration.D(), s.Latency.Min.D(), s.CompactionInterval.D(), *s.ManagedFields, s.Actors[0].Replicas, s.Actors[0].Retry.Policy}
	want := []any{int64(DefaultSeed), DefaultDuration, DefaultLatencyMin, DefaultCompactionInterval, true, 1, RetryNone}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		name, edit, want string
	}{
		{"unknown top-level field", "name: t\ncolour: red", `t.yaml:4: unknown field "colour" in the scenario`},
		{"unknown actor field", "  rate: 5", `t.yaml:14: unknown field "speed" in an actor`},
		{"bad method", "  method: update", `t.yaml:11: actors[0] ("w"): unknown method "upsert"`},
		{"rate and think time", "  rate: 5", `t.yaml:9: actors[0] ("w"): set exactly one of rate (writes per second) and thinkTime`},
		{"bad retry policy", "  rate: 5", `t.yaml:14: actors[0] ("w"): unknown retry policy "Forever"`},
		{"bad duration", "name: t", `t.yaml:4: "forever" is not a duration`},
		{"lease rule", "  rate: 5", `renewDeadline must be greater than retryPeriod*1.2`},
		{"wrong kind", "kind: Scenario", `t.yaml:2: not a Scenario: the file holds kind "Pod" (apiVersion "rv.kubectl-rv.dev/v1alpha1")`},
		{"a Deployment", "", `t.yaml:2: not a Scenario: the file holds kind "Deployment" (apiVersion "apps/v1")`},
		{"boolean increment", "", `t.yaml:12: actors[0].change.increment must be a string, not "true" (a boolean): quote it if you mean the text`},
		{"NaN field manager", "", `t.yaml:10: actors[0].fieldManager must be a string, not ".nan" (a number)`},
		{"boolean name", "", `t.yaml:9: actors[0].name must be a string, not "true" (a boolean)`},
		{"rate in words", "", `t.yaml:13: actors[0].rate must be a number, not "fast" (a string)`},
		{"integer replicas", "", `t.yaml:10: actors[0].replicas must be an integer, not "1.5" (a number)`},
		{"list for a string", "", `t.yaml:3: name must be a string, not a list`},
		{"zero duration", "", `t.yaml:4: duration must be positive: omit it for the default 1m0s`},
	}
	edits := map[string][2]string{
		"unknown actor field":     {"  rate: 5", "  rate: 5\n  speed: 3"},
		"bad method":              {"  method: update", "  method: upsert"},
		"rate and think time":     {"  rate: 5", "  rate: 5\n  thinkTime: 1s"},
		"bad retry policy":        {"  rate: 5", "  rate: 5\n  retry: {policy: Forever}"},
		"bad duration":            {"name: t", "name: t\nduration: forever"},
		"lease rule":              {"  method: update\n  change: {increment: data.count}\n  rate: 5", "  method: leader-election\n  target: {apiVersion: coordination.k8s.io/v1, kind: Lease, name: l}\n  lease: {leaseDuration: 15s, renewDeadline: 2s, retryPeriod: 2s}"},
		"wrong kind":              {"kind: Scenario", "kind: Pod"},
		"unknown top-level field": {"name: t", "name: t\ncolour: red"},
		"a Deployment":            {"apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario", "apiVersion: apps/v1\nkind: Deployment"},
		"boolean increment":       {"increment: data.count", "increment: true"},
		"NaN field manager":       {"  target:", "  fieldManager: .nan\n  target:"},
		"boolean name":            {"- name: w", "- name: true"},
		"rate in words":           {"rate: 5", "rate: fast"},
		"integer replicas":        {"  target:", "  replicas: 1.5\n  target:"},
		"list for a string":       {"name: t", "name: [t]"},
		"zero duration":           {"name: t", "name: t\nduration: 0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := edits[c.name]
			src := strings.Replace(valid, e[0], e[1], 1)
			if c.name == "lease rule" {
				src = strings.Replace(src, "  target: {apiVersion: v1, kind: ConfigMap, name: c}\n", "", 1)
			}
			_, err := Parse([]byte(src), "t.yaml")
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("want a *scenario.Error, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestBuiltinsParse(t *testing.T) {
	var names []string
	for _, b := range Builtins() {
		names = append(names, b.Name)
	}
	want := []string{"two-clients", "controller-fight", "json-patch-index", "leader-election", "lost-update", "quota", "retry-storm", "ssa-fight", "watch-410"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("built-ins (-want +got):\n%s", d)
	}
	if _, err := LoadBuiltin("nope"); err == nil || !strings.Contains(err.Error(), "two-clients") {
		t.Errorf("an unknown built-in should list the names, got %v", err)
	}
}

func TestParsePath(t *testing.T) {
	p, err := ParsePath("spec.template.spec.containers[name=app].ports[0].containerPort")
	if err != nil {
		t.Fatal(err)
	}
	want := fieldpath.MakePathOrDie("spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "app"), "ports", 0, "containerPort")
	if !p.Equals(want) {
		t.Errorf("ParsePath = %s, want %s", p, want)
	}
	for _, bad := range []string{"", "spec.", "spec..x", "spec[", "metadata.resourceVersion", ".metadata.managedFields[0]", "a[x]", "[0].x"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q) should fail", bad)
		}
	}
}

// FuzzParse feeds arbitrary bytes to the parser: it must return a scenario
// or an *Error, never panic, and a parsed scenario must be valid again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	for _, b := range Builtins() {
		f.Add(b.Source)
	}
	f.Add([]byte("apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nactors: [{name: a}]"))
	f.Add([]byte("{{{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "f.yaml")
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *scenario.Error: %T %v", err, err)
			}
			return
		}
		if len(s.Actors) == 0 || s.Duration <= 0 || s.Seed == 0 {
			t.Fatalf("accepted an invalid scenario: %+v", s)
		}
	})
}
