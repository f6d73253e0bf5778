package conflicts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// changes is what assignChanges decided for the scenario as a whole.
type changes struct {
	// counter is the path the incrementing writers increment, "" when
	// none does.
	counter string
	// incrementers and setters name the actors of each kind, for the
	// header.
	incrementers, setters []string
	// seeds are the paths the object starts with (at "0"), so that
	// kubectl-create, an Update manager, owns them: the counter, and the
	// fields an applier lost to a manager that is not a writer in the log.
	seeds []string
}

// assignChanges decides what each writer's writes change, so that the
// run's 409s are of the kinds the log's were:
//
//   - An applier sets literal values (an apply declares the values it
//     owns; it cannot increment) at the first field its conflicts name,
//     else at a field another apply conflict named it the owner of, else at
//     a field of its own. A field it lost to a manager that is not a writer
//     in the log starts in the object, owned by kubectl-create.
//   - A writer that an apply conflict named as an Update owner of a field
//     sets literal values there too: its writes take the field from the
//     applier, whose next apply without force is an APPLY-409.
//   - Every other writer increments one counter, at a path no one sets,
//     so that the run counts their lost updates and nothing else moves the
//     counter. (Writers of /status increment a status field.)
//
// Example: m3's apply lost .data.a to m1 and .data.b to m2, both Apply
// entries. m1 sets data.a, m2 data.b (the field m3 lost to it), m3 data.a:
// m1 applied first in the log and does in the run, so m3 meets APPLY-409s.
func assignChanges(plans []*writerPlan, typ writepath.Type) changes {
	var ch changes
	actors := map[string]bool{}
	for _, p := range plans {
		actors[p.manager] = true
	}
	set := map[string]bool{}
	setAt := func(i int, p *writerPlan, path, why string) {
		base := 1000 * (i + 1)
		p.change = scenario.Change{Set: path, Values: []any{fmt.Sprint(base), fmt.Sprint(base + 1)}}
		p.why = "it sets " + path + " to literal values: " + why
		set[path] = true
		ch.setters = append(ch.setters, p.name())
	}
	for i, p := range plans {
		if !p.method.IsApply() {
			continue
		}
		path, why, seed := applierField(plans, p, typ, actors)
		if seed && !slices.Contains(ch.seeds, path) {
			ch.seeds = append(ch.seeds, path)
		}
		setAt(i, p, path, why)
	}
	for i, p := range plans {
		if p.method.IsApply() || p.method == writepath.UpdateStatus {
			continue
		}
		if path, applier := updateOwnerField(plans, p, typ); path != "" {
			setAt(i, p, path, "an apply of "+quoteComment(applier)+" lost it to this manager, an Update entry")
		}
	}
	base := counterPath(typ)
	ch.counter = base
	for n := 2; set[ch.counter]; n++ {
		ch.counter = fmt.Sprintf("%s-%d", base, n)
	}
	counted := false
	for _, p := range plans {
		switch {
		case p.change.Set != "":
		case p.method == writepath.UpdateStatus:
			p.change = scenario.Change{Increment: statusPath(typ)}
			p.why = "it increments " + statusPath(typ)
		default:
			p.change = scenario.Change{Increment: ch.counter}
			p.why = "it increments the counter " + ch.counter
			ch.incrementers = append(ch.incrementers, p.name())
			counted = true
		}
	}
	if !counted {
		ch.counter = ""
	} else {
		ch.seeds = append([]string{ch.counter}, ch.seeds...)
	}
	return ch
}

// applierField is the field applier p sets, why, and whether the object
// starts with it (owned by kubectl-create).
func applierField(plans []*writerPlan, p *writerPlan, typ writepath.Type, actors map[string]bool) (path, why string, seed bool) {
	for _, o := range p.owners {
		for _, f := range o.Fields {
			if path = settablePath(f, typ); path == "" {
				continue
			}
			why = "its apply lost it to " + quoteComment(o.Manager)
			if !actors[o.Manager] {
				return path, why + ", not a writer in the log: the object starts with it, owned by kubectl-create", true
			}
			return path, why, false
		}
	}
	for _, q := range plans {
		for _, o := range q.owners {
			if o.Manager != p.manager || q.manager == p.manager {
				continue
			}
			for _, f := range o.Fields {
				if path = settablePath(f, typ); path != "" {
					return path, "an apply of " + quoteComment(q.manager) + " lost it to this manager", false
				}
			}
		}
	}
	path = ownField(typ, p.name())
	if p.conflicts > 0 && p.method == writepath.Apply {
		return path, "a field of its own: its 409s name no field simulate can set, so the object starts with it, owned by kubectl-create", true
	}
	return path, "a field of its own: no apply conflict in the log names a field of it", false
}

// updateOwnerField is the first field an apply conflict named p's manager
// the Update owner of, with the applier; "" when none did.
func updateOwnerField(plans []*writerPlan, p *writerPlan, typ writepath.Type) (string, string) {
	for _, q := range plans {
		if !q.method.IsApply() {
			continue
		}
		for _, o := range q.owners {
			if o.Manager != p.manager || o.Applied {
				continue
			}
			for _, f := range o.Fields {
				if path := settablePath(f, typ); path != "" {
					return path, q.manager
				}
			}
		}
	}
	return "", ""
}

// settableRE matches the fields, as the API server prints them, that a
// scenario can set to a string: a ConfigMap's data keys, annotations and
// labels, under keys without dots or slashes (a dotted path could not
// tell them from nesting).
var settableRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\.(data|metadata\.annotations|metadata\.labels)\.([A-Za-z0-9][A-Za-z0-9_-]{0,62})$`)
})

// settablePath turns a field of an apply conflict (.data.a) into the
// dotted path a scenario sets (data.a); "" for a field it cannot set.
func settablePath(field string, typ writepath.Type) string {
	m := settableRE().FindStringSubmatch(field)
	if m == nil || m[1] == "data" && !isConfigMap(typ) {
		return ""
	}
	return field[1:]
}

// ownField is a field of writer name's own.
func ownField(typ writepath.Type, name string) string {
	if isConfigMap(typ) {
		return "data." + name
	}
	return "metadata.annotations." + name
}

func isConfigMap(t writepath.Type) bool { return t.GVK.Group == "" && t.GVK.Kind == "ConfigMap" }

// initialObject is the object the scenario starts with: target, with each
// of seeds (dotted paths without list indexes) at "0".
func initialObject(target scenario.Ref, seeds []string) map[string]any {
	md := map[string]any{"name": target.Name}
	if target.Namespace != "" {
		md["namespace"] = target.Namespace
	}
	o := map[string]any{"apiVersion": target.APIVersion, "kind": target.Kind, "metadata": md}
	for _, s := range seeds {
		// Keys are settableRE's or counterPath's: no dots inside.
		_ = unstructured.SetNestedField(o, "0", strings.Split(s, ".")...)
	}
	return o
}

// changeSummary says, for the header, what the writers change, wrapped
// at 79 columns.
func changeSummary(ch changes) string {
	return text.Wrap(changeSentences(ch), 79)
}

// changeSentences says who sets literal values and who increments the
// counter.
func changeSentences(ch changes) string {
	if len(ch.setters) == 0 {
		return fmt.Sprintf("Every writer increments one counter, %s, so the run also counts lost updates.", ch.counter)
	}
	s := fmt.Sprintf("An apply declares the values it owns and cannot increment: appliers, and the "+
		"writers their conflicts name as owners of a field, set literal values there (%s). ", strings.Join(ch.setters, ", "))
	if ch.counter == "" {
		return s + "No writer increments a counter, so the run counts no lost updates."
	}
	return s + fmt.Sprintf("The others (%s) increment one counter, %s, so the run counts their lost updates.",
		strings.Join(ch.incrementers, ", "), ch.counter)
}
