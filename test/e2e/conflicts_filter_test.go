//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestConflictsFilters: on the busy scene's real log, --writer keeps each
// writer's row whole (the figures its own log counted, and whom it lost
// to, though the winners' writes are not shown), and --verb,
// --subresource and --status count exactly the log's writes that match,
// leaving out the rest as unshown.
func TestConflictsFilters(t *testing.T) {
	s := sharedBusyScene(t)
	all := runConflicts(t, "--audit-log", s.log, "-n", s.ns)
	for manager, want := range s.writers {
		rep := runConflicts(t, "--audit-log", s.log, "-n", s.ns, "--writer", manager)
		if rep.Summary.Writers != 1 || len(rep.Writers) != 1 {
			t.Errorf("--writer %s: %d writers %+v", manager, rep.Summary.Writers, rep.Writers)
			continue
		}
		checkWriter(t, rep, manager, want.writerLog, false)
		checkLostTo(t, manager, rep.Writers[0], want)
		if rep.Summary.Attempts+rep.Summary.Unshown != all.Summary.Attempts {
			t.Errorf("--writer %s: %d attempts shown and %d not, %d in all", manager, rep.Summary.Attempts, rep.Summary.Unshown, all.Summary.Attempts)
		}
	}
	for _, tc := range []struct {
		args []string
		keep func(e rawEvent) bool
	}{
		{[]string{"--status", "409"}, func(e rawEvent) bool { return e.ResponseStatus.Code == 409 }},
		{[]string{"--status", "2xx", "--status", "-201"}, func(e rawEvent) bool { return e.ResponseStatus.Code/100 == 2 && e.ResponseStatus.Code != 201 }},
		{[]string{"--verb", "update", "--verb", "create"}, func(e rawEvent) bool { return e.Verb == "update" || e.Verb == "create" }},
		{[]string{"--subresource", "status"}, func(e rawEvent) bool { return e.ObjectRef.Subresource == "status" }},
		{[]string{"--subresource", "-*", "--verb", "-patch"}, func(e rawEvent) bool { return e.ObjectRef.Subresource == "" && e.Verb != "patch" }},
		{[]string{"--writer", "kube-controller-manager", "--status", "409"}, func(e rawEvent) bool {
			return e.ResponseStatus.Code == 409 && strings.HasPrefix(e.UserAgent, "kube-controller-manager/") && !strings.Contains(e.RequestURI, "fieldManager=")
		}},
	} {
		rep := runConflicts(t, append([]string{"--audit-log", s.log, "-n", s.ns}, tc.args...)...)
		shown, conflicts := 0, 0
		for _, e := range rawWrites(t, s.log, s.ns) {
			if tc.keep(e) {
				shown++
				if e.ResponseStatus.Code == 409 {
					conflicts++
				}
			}
		}
		if shown == 0 {
			t.Errorf("%v: the scene's log has no such write: the case tests nothing", tc.args)
		}
		if rep.Summary.Attempts != shown || rep.Summary.Conflicts != conflicts || rep.Summary.Unshown != all.Summary.Attempts-shown {
			t.Errorf("%v: %d attempts (%d 409s) shown and %d not; the log has %d such writes (%d 409s) of %d",
				tc.args, rep.Summary.Attempts, rep.Summary.Conflicts, rep.Summary.Unshown, shown, conflicts, all.Summary.Attempts)
		}
	}
	if r := cluster.RV(t, "conflicts", "--audit-log", s.log, "--verb", "get"); r.Code != 2 || !strings.Contains(r.Stderr, `--verb "get" is not a write verb`) {
		t.Errorf("--verb get: %s", r)
	}
}

// rawWrites are the real writes of namespace ns in the audit log itself
// (no dry runs), as rawCounts counts them.
func rawWrites(t *testing.T, path, ns string) []rawEvent {
	t.Helper()
	var out []rawEvent
	for _, e := range rawEvents(t, path) {
		if e.ObjectRef.Namespace == ns && e.namedWrite() && !e.dryRun() {
			out = append(out, e)
		}
	}
	return out
}
