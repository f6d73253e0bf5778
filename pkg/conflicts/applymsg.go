package conflicts

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ownerHeadRE matches the head of one owner in an apply conflict's
// message, as k8s.io/apimachinery's managedfields getConflictMessage and
// printManager write it: the manager quoted by %q, then for an Update
// entry its subresource, API version and time:
//
//	Apply failed with 1 conflict: conflict with "m1": .data.a
//	Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using autoscaling/v1 at 2026-11-24T10:00:00Z: .spec.replicas
//	Apply failed with 2 conflicts: conflicts with "m1":
//	- .data.a
//	conflicts with "m2" using v1:
//	- .data.b
var ownerHeadRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`conflicts? with ("(?:[^"\\]|\\.)*")(?: with subresource "(?:[^"\\]|\\.)*")?( using [^\s:]+(?: at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)?)?:`)
})

// ApplyConflictOwners reads every manager an apply conflict's message
// names, with its fields in the message's order and whether its entry is
// an Apply (named without an API version); a manager named twice is one
// owner. A message it cannot read gives none.
func ApplyConflictOwners(msg string) []FieldOwner {
	heads := ownerHeadRE().FindAllStringSubmatchIndex(msg, -1)
	var out []FieldOwner
	for i, h := range heads {
		name, err := strconv.Unquote(msg[h[2]:h[3]])
		if err != nil {
			continue
		}
		end := len(msg)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		fields := ownerFields(msg[h[1]:end])
		j := slices.IndexFunc(out, func(o FieldOwner) bool { return o.Manager == name })
		if j < 0 {
			out = append(out, FieldOwner{Manager: name})
			j = len(out) - 1
		}
		out[j].Applied = out[j].Applied || h[4] < 0
		for _, f := range fields {
			if !slices.Contains(out[j].Fields, f) {
				out[j].Fields = append(out[j].Fields, f)
			}
		}
	}
	return out
}

// ownerFields reads the fields after an owner's head: " .path" in the
// one-conflict form, "\n- .path" lines in the other.
func ownerFields(s string) []string {
	if !strings.HasPrefix(s, "\n") {
		if f := strings.TrimSpace(s); f != "" {
			return []string{f}
		}
		return nil
	}
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if f, ok := strings.CutPrefix(line, "- "); ok && f != "" {
			out = append(out, f)
		}
	}
	return out
}
