package conflicts

import (
	"fmt"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// objectType finds obj's kind among the built-in types simulate knows; an
// unknown resource becomes a custom type of version v1 whose kind is the
// resource's singular, capitalised (the audit event names the resource,
// not the kind), returned as the scenario's type declaration too.
func objectType(obj ObjectKey) (writepath.Type, *scenario.Type) {
	for _, t := range writepath.BuiltinTypes(nil) {
		if t.Resource == obj.Resource && t.GVK.Group == obj.Group {
			return t, nil
		}
	}
	kind := strings.TrimSuffix(obj.Resource, "s")
	if kind == "" {
		kind = "object"
	}
	kind = strings.ToUpper(kind[:1]) + kind[1:]
	gvk := schema.GroupVersionKind{Group: obj.Group, Version: "v1", Kind: kind}
	t := writepath.CustomType(gvk, obj.Resource, obj.Namespace != "", true)
	return t, &scenario.Type{APIVersion: gvk.GroupVersion().String(), Kind: kind, Resource: obj.Resource, ClusterScoped: obj.Namespace == "", StatusSubresource: true}
}

// counterPath is where the counter of the incrementing writers goes:
// data.count of a ConfigMap, an annotation of anything else.
func counterPath(t writepath.Type) string {
	if isConfigMap(t) {
		return "data.count"
	}
	return "metadata.annotations.count"
}

// statusPath is the field a writer of /status increments.
func statusPath(t writepath.Type) string {
	if t.New == nil {
		return "status.count"
	}
	return "status.observedGeneration"
}

// header is the comment at the top of the file: where it came from and
// how it models the writers.
func header(in ScenarioInput, obj ObjectKey, first time.Time, window time.Duration, plans []*writerPlan, ch changes) string {
	var logs []string
	for _, o := range in.Origin {
		logs = append(logs, quoteComment(o))
	}
	file := "FILE.yaml"
	if in.File != "" {
		file = quoteComment(in.File)
	}
	attempts, conflicts := 0, 0
	writers := map[string]bool{}
	for _, p := range plans {
		writers[p.writer] = true
		attempts += p.attempts
		conflicts += p.conflicts
	}
	return fmt.Sprintf(`Written by kubectl rv conflicts --scenario from the audit log %s:
the contention on %s from %s for %s: %d writers, %d write attempts, %d 409s.
Each actor is one writer of the log (named in the comment above it) and one
write method it sent, force as sent, with its rate (retry chains per second
over that window). work, the time between an actor's read and its write, is
chosen so that at these rates the actor's 409 rate is the one observed (a
Poisson model: work = -ln(1 - rate) / the other writers' successes per
second). An apply's 409 depends on who owns the fields it sets: appliers start
when they first wrote in the log and write at their rate's period.
%s
The run lasts at least 30s, so that rates, more than counts, compare with the
log's. Run it with: kubectl rv simulate run %s`,
		strings.Join(logs, ", "), quoteComment(obj.String()), first.UTC().Format(time.RFC3339Nano), window.Round(time.Millisecond),
		len(writers), attempts, conflicts, changeSummary(ch), file)
}

// render writes sc as YAML with the header on top and a comment above
// each actor.
func render(sc *scenario.Scenario, actorComments []string, head string) ([]byte, error) {
	var doc yaml.Node
	if err := doc.Encode(sc); err != nil {
		return nil, err
	}
	doc.HeadComment = head
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "actors" {
			continue
		}
		for j, a := range doc.Content[i+1].Content {
			if j < len(actorComments) {
				a.HeadComment = actorComments[j]
			}
		}
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
