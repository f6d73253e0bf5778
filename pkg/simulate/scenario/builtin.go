package scenario

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin is a built-in scenario.
type Builtin struct {
	Name        string
	Description string
	// Source is the scenario's YAML, as `simulate list -o yaml` prints it.
	Source []byte
}

// Builtins returns the built-in scenarios sorted by name, two-clients first.
func Builtins() []Builtin {
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic(err)
	}
	var out []Builtin
	for _, e := range entries {
		b, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			panic(err)
		}
		s, err := Parse(b, "builtin/"+e.Name())
		if err != nil {
			panic(fmt.Sprintf("built-in scenario %s: %v", e.Name(), err))
		}
		out = append(out, Builtin{Name: s.Name, Description: s.Description, Source: b})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Name == "two-clients") != (out[j].Name == "two-clients") {
			return out[i].Name == "two-clients"
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LoadBuiltin parses the built-in scenario name.
func LoadBuiltin(name string) (*Scenario, error) {
	var names []string
	for _, b := range Builtins() {
		if b.Name == name {
			return Parse(b.Source, "builtin/"+name+".yaml")
		}
		names = append(names, b.Name)
	}
	return nil, fmt.Errorf("no built-in scenario %q: use one of %s (kubectl rv simulate list)", name, strings.Join(names, ", "))
}
