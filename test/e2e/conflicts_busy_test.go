//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestConflictsBusySceneWriters: in the busy scene, every writer's
// attempts, 409s, successes, retry chains, give-ups, causes and whom it
// lost to (where the scene makes it knowable) are what its own log says;
// each row shows the user agent its writer sent and no other, and
// kube-controller-manager's writes are its own rows, not kubectl's.
func TestConflictsBusySceneWriters(t *testing.T) {
	s := sharedBusyScene(t)
	rep := runConflicts(t, "--audit-log", s.log, "-n", s.ns)
	rows := map[string]writerRow{}
	for _, w := range rep.Writers {
		if w.Writer.Pod == "" {
			rows[w.Writer.FieldManager] = w
		}
	}
	for manager, want := range s.writers {
		got, ok := rows[manager]
		if !ok {
			t.Errorf("writer %s (%+v) is not in the report", manager, want.conflictsTally)
			continue
		}
		t.Logf("%s: its log %+v, report %+v", manager, want.conflictsTally, got.conflictsTally)
		checkWriter(t, rep, manager, want.writerLog, false)
		if got.Shared != nil || !strings.HasPrefix(got.UserAgent, want.userAgent) {
			t.Errorf("writer %s sent user agent %q: the row shows %q, shared %+v", manager, want.userAgent, got.UserAgent, got.Shared)
		}
		checkLostTo(t, manager, got, want)
	}
	kcm, ok := rows["kube-controller-manager"]
	if !ok {
		t.Fatalf("kube-controller-manager's writes (field manager from its user agent) are not a writer: %+v", rep.Writers)
	}
	uas := []string{kcm.UserAgent}
	if kcm.Shared != nil {
		uas = append(uas, kcm.Shared.UserAgents...)
	}
	for _, ua := range uas {
		if ua != "" && !strings.HasPrefix(ua, "kube-controller-manager/") {
			t.Errorf("kube-controller-manager's row shows a user agent it did not send: %q", ua)
		}
	}
}

// checkLostTo compares whom a writer lost to with what the scene knows:
// the only writers it can have lost to, and an apply conflict's owners
// and fields as the API server's error named them.
func checkLostTo(t *testing.T, manager string, got writerRow, want *sceneWriter) {
	t.Helper()
	if want.lostTo == nil {
		return
	}
	var names []string
	for _, l := range got.LostTo {
		names = append(names, l.Name)
		ok := slices.ContainsFunc(want.lostTo, func(w string) bool { return l.Name == "manager "+w || strings.HasSuffix(l.Name, "/"+w) })
		if !ok {
			t.Errorf("writer %s lost to %s, but it can only lose to %v", manager, l.Name, want.lostTo)
		}
	}
	if want.owners == nil {
		return
	}
	for owner, fields := range want.owners {
		if !slices.Contains(names, "manager "+owner) {
			t.Errorf("writer %s: the apply conflict named %s, the report's lost to %v", manager, owner, names)
		}
		i := slices.IndexFunc(got.FieldsLost, func(f fieldOwner) bool { return f.Manager == owner })
		if i < 0 || !reflect.DeepEqual(slices.Sorted(slices.Values(fields)), got.FieldsLost[i].Fields) {
			t.Errorf("writer %s: %s owns %v, the report's fields lost %+v", manager, owner, fields, got.FieldsLost)
		}
	}
}

// rawCounts counts, in the audit log itself, the write events of
// namespace ns (on object name when not ""): real writes, dry runs, and
// every ResponseComplete or Panic event, each auditID once.
func rawCounts(t *testing.T, path, ns, resource, name string) (writes, dryRuns, events int) {
	t.Helper()
	evs := rawEvents(t, path)
	for _, e := range evs {
		inScope := e.ObjectRef.Namespace == ns && (name == "" || e.ObjectRef.Resource == resource && (name == "*" || e.ObjectRef.Name == name))
		if !inScope || !e.namedWrite() {
			continue
		}
		if e.dryRun() {
			dryRuns++
		} else {
			writes++
		}
	}
	return writes, dryRuns, len(evs)
}

// rawEvent is one completed request of the audit log, as the log says.
type rawEvent struct {
	AuditID, Stage, Verb, RequestURI, UserAgent string
	User                                        rawUser
	ImpersonatedUser                            *rawUser
	ObjectRef                                   struct{ Resource, APIGroup, Namespace, Name, Subresource string }
	ResponseStatus                              struct {
		Code   int
		Reason string
	}
}

// rawUser is an event's user or impersonated user.
type rawUser struct {
	Username string
	Extra    map[string][]string
}

// namedWrite says whether e is a write of a named object (or a create or
// deletecollection), as conflicts counts them.
func (e rawEvent) namedWrite() bool {
	if !slices.Contains([]string{"create", "update", "patch", "delete", "deletecollection"}, e.Verb) {
		return false
	}
	return e.ObjectRef.Name != "" || e.Verb == "create" || e.Verb == "deletecollection"
}

func (e rawEvent) dryRun() bool { return strings.Contains(e.RequestURI, "dryRun=All") }

// rawEvents reads the log's ResponseComplete and Panic events, each
// auditID once, with encoding/json: only its last line may be cut short.
func rawEvents(t *testing.T, path string) []rawEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	bad := 0
	var out []rawEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e rawEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// The last line may be cut short: the API server was writing it.
			if bad++; bad > 1 {
				t.Fatalf("%s: two lines are not JSON: %v", path, err)
			}
			continue
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" || seen[e.AuditID+e.Stage] {
			continue
		}
		seen[e.AuditID+e.Stage] = true
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConflictsBusySceneDryRuns: kubectl rv predict's server dry runs are
// counted as left out, and every write attempt the report counts is one
// of the log's real writes.
func TestConflictsBusySceneDryRuns(t *testing.T) {
	s := sharedBusyScene(t)
	writes, dryRuns, _ := rawCounts(t, s.log, s.ns, "", "")
	rep := runConflicts(t, "--audit-log", s.log, "-n", s.ns)
	if dryRuns == 0 {
		t.Fatal("the scene's log has no dry run: kubectl rv predict made none")
	}
	if rep.Summary.DryRuns != dryRuns || rep.Summary.Attempts != writes {
		t.Errorf("the log has %d writes and %d dry runs in %s; the report counts %d attempts and %d dry runs", writes, dryRuns, s.ns, rep.Summary.Attempts, rep.Summary.DryRuns)
	}
	for _, w := range rep.Writers {
		if w.Writer.FieldManager == "ci" {
			t.Errorf("predict's dry runs (field manager ci) are a writer: %+v", w)
		}
	}
}

// TestConflictsBusySceneRotated: a directory holding the log and a gzip
// copy of it gives the log's own figures, and says how many events it
// read twice.
func TestConflictsBusySceneRotated(t *testing.T) {
	s := sharedBusyScene(t)
	_, _, events := rawCounts(t, s.log, s.ns, "", "")
	alone := runConflicts(t, "--audit-log", s.log, "-n", s.ns)
	both := runConflicts(t, "--audit-log", s.rotated, "-n", s.ns)
	if !reflect.DeepEqual(alone.Summary, both.Summary) || !reflect.DeepEqual(alone.Writers, both.Writers) {
		t.Errorf("the log beside its copy:\n%+v\nthe log alone:\n%+v", both.Summary, alone.Summary)
	}
	if both.Input.Duplicates != events || alone.Input.Duplicates != 0 {
		t.Errorf("the copy repeats the log's %d events; the report says %d duplicates (the log alone %d)", events, both.Input.Duplicates, alone.Input.Duplicates)
	}
	r := cluster.RV(t, "conflicts", "--audit-log", s.rotated, "-n", s.ns)
	if r.Code != 0 || !strings.Contains(r.Stderr, fmt.Sprintf("%d event(s) were read twice", events)) {
		t.Errorf("stderr does not say that %d events were read twice: %s", events, r)
	}
}

// TestConflictsBusySceneObject: --object restricts every figure: the
// summary counts the object's writes only, and the two-owner apply
// conflict names both owners with their fields. The type is read as
// kubectl reads it: plural, short name or kind.
func TestConflictsBusySceneObject(t *testing.T) {
	s := sharedBusyScene(t)
	writes, _, _ := rawCounts(t, s.log, s.ns, "configmaps", "two")
	var rep conflictsReport
	for _, typ := range []string{"cm", "ConfigMap", "configmaps"} {
		rep = runConflicts(t, "--audit-log", s.log, "-n", s.ns, "--object", typ+"/two")
		if rep.Summary.Attempts != writes || rep.Summary.Objects != 1 {
			t.Errorf("the log has %d writes on configmaps/two; the report of --object %s/two counts %d attempts on %d objects", writes, typ, rep.Summary.Attempts, rep.Summary.Objects)
		}
	}
	if len(rep.Causes) != 1 || rep.Causes[0].Cause != "ssa-field-conflict" || rep.Causes[0].Count != 1 {
		t.Errorf("causes %+v, want the one apply conflict", rep.Causes)
	}
	want := s.writers["busy-m3"].owners
	causeFields := map[string][]string{}
	for _, c := range rep.Causes {
		for _, o := range c.Fields {
			causeFields[o.Manager] = o.Fields
		}
	}
	if fmt.Sprint(causeFields) != fmt.Sprint(want) {
		t.Errorf("the causes view's fields %v, the API server's error named %v", causeFields, want)
	}
	wide := cluster.RV(t, "conflicts", "--audit-log", s.log, "-n", s.ns, "--object", "cm/two", "--view", "causes", "-o", "wide")
	for m, fields := range want {
		if cell := strings.Join(fields, ", ") + " (" + m + ")"; !strings.Contains(wide.Stdout, cell) {
			t.Errorf("-o wide causes view lacks %q:\n%s", cell, wide)
		}
	}
	for _, a := range rep.Timeline {
		if a.Code != 409 {
			continue
		}
		got := map[string][]string{}
		for _, o := range a.FieldOwners {
			got[o.Manager] = o.Fields
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the 409's owners %v, the API server's error named %v", got, want)
		}
	}
}

// TestConflictsHostPrefixedLog: the busy scene's real audit log in the
// shape oc adm node-logs prints it (each line after a host name, two
// hosts) gives the plain log's report; the timeline rows name the host
// and the auditID, which is in the real log.
func TestConflictsHostPrefixedLog(t *testing.T) {
	s := sharedBusyScene(t)
	raw, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i, l := range strings.SplitAfter(string(raw), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "master-%d %s", i%2, l)
		}
	}
	prefixed := filepath.Join(t.TempDir(), "node-logs.log")
	if err := os.WriteFile(prefixed, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := cluster.RV(t, "conflicts", "--audit-log", s.log, "-n", s.ns, "--object", "cm/two", "-o", "json")
	hosts := cluster.RV(t, "conflicts", "--audit-log", prefixed, "-n", s.ns, "--object", "cm/two", "-o", "json")
	if plain.Code != 0 || hosts.Code != 0 {
		t.Fatalf("plain: %s\nprefixed: %s", plain, hosts)
	}
	var a, p struct {
		Summary  json.RawMessage `json:"summary"`
		Writers  json.RawMessage `json:"writers"`
		Timeline []map[string]any
	}
	if err := json.Unmarshal([]byte(plain.Stdout), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(hosts.Stdout), &p); err != nil {
		t.Fatal(err)
	}
	if string(a.Summary) != string(p.Summary) || string(a.Writers) != string(p.Writers) || len(a.Timeline) != len(p.Timeline) || len(a.Timeline) == 0 {
		t.Fatalf("the host-prefixed log's report differs:\nplain:    %s\nprefixed: %s", plain.Stdout, hosts.Stdout)
	}
	for i, row := range p.Timeline {
		id, _ := row["auditID"].(string)
		if replica := row["replica"]; replica != "master-0" && replica != "master-1" || id == "" || !strings.Contains(string(raw), `"auditID":"`+id+`"`) {
			t.Errorf("timeline row %d: replica %v, auditID %q (not in the log?)", i, replica, id)
		}
		delete(row, "replica")
		if fmt.Sprint(row) != fmt.Sprint(a.Timeline[i]) {
			t.Errorf("timeline row %d: %v, plain %v", i, row, a.Timeline[i])
		}
	}
}

// TestConflictsAWSExports: the busy scene's real audit log as EKS's
// CloudWatch Logs would hand it out (aws logs filter-log-events and aws
// logs get-query-results output, built from the AWS CLI's documented
// response shapes) gives the plain log's report, 409s and all.
func TestConflictsAWSExports(t *testing.T) {
	s := sharedBusyScene(t)
	raw, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	var events []map[string]any
	var rows [][]map[string]string
	for i, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		events = append(events, map[string]any{"logStreamName": "kube-apiserver-audit-0123456789abcdef", "timestamp": 1764237600000 + i, "message": l, "ingestionTime": 1764237601000 + i, "eventId": fmt.Sprintf("3894%030d", i)})
		rows = append(rows, []map[string]string{{"field": "@timestamp", "value": "2026-11-27 10:00:00.000"}, {"field": "@message", "value": l}})
	}
	dir := t.TempDir()
	exports := map[string]any{
		"filter-log-events.json": map[string]any{"events": events, "searchedLogStreams": []map[string]any{{"logStreamName": "kube-apiserver-audit-0123456789abcdef", "searchedCompletely": true}}},
		"get-query-results.json": map[string]any{"results": rows, "statistics": map[string]int{"recordsMatched": len(rows)}, "status": "Complete"},
	}
	want := cluster.RV(t, "conflicts", "--audit-log", s.log, "-n", s.ns, "--view", "writers", "-o", "json")
	if want.Code != 0 || !strings.Contains(want.Stdout, `"conflicts": `) {
		t.Fatalf("plain log: %s", want)
	}
	for name, doc := range exports {
		b, err := json.MarshalIndent(doc, "", "    ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got := cluster.RV(t, "conflicts", "--audit-log", path, "-n", s.ns, "--view", "writers", "-o", "json")
		if got.Code != 0 {
			t.Fatalf("%s: %s", name, got)
		}
		// The input section counts the export's lines and the scope names
		// the file; the rest is the same.
		if a, b := dropInput(t, want.Stdout), dropInput(t, got.Stdout); a != b {
			t.Errorf("%s gives another report than the plain log:\nplain:  %s\nexport: %s", name, a, b)
		}
	}
	bad := filepath.Join(dir, "cut.json")
	b, _ := json.MarshalIndent(exports["filter-log-events.json"], "", "    ")
	if err := os.WriteFile(bad, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cluster.RV(t, "conflicts", "--audit-log", bad); r.Code != 2 || !strings.Contains(r.Stderr, bad+":") || !strings.Contains(r.Stderr, "aws logs filter-log-events output") {
		t.Errorf("a cut export: want exit 2 naming the file and line, got %s", r)
	}
}

// dropInput is a report's JSON without its input and scope sections.
func dropInput(t *testing.T, report string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(report), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "input")
	delete(m, "scope")
	b, _ := json.Marshal(m)
	return string(b)
}

// TestConflictsResourceFilter: --resource keeps the objects of the types
// it names, with kubectl's names, globs and exclusions: the attempts
// counted are the log's writes of those types.
func TestConflictsResourceFilter(t *testing.T) {
	s := sharedBusyScene(t)
	cms, _, _ := rawCounts(t, s.log, s.ns, "configmaps", "*")
	all, _, _ := rawCounts(t, s.log, s.ns, "", "")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--resource", "cm"}, cms},
		{[]string{"--resource", "configmaps."}, cms},
		{[]string{"--resource", "*.*", "--resource", "-configmaps"}, all - cms},
	} {
		rep := runConflicts(t, append([]string{"--audit-log", s.log, "-n", s.ns}, tc.args...)...)
		if rep.Summary.Attempts != tc.want || tc.want == 0 {
			t.Errorf("%v: %d attempts, the log has %d such writes", tc.args, rep.Summary.Attempts, tc.want)
		}
	}
	if r := cluster.RV(t, "conflicts", "--audit-log", s.log, "--resource", "[x"); r.Code != 2 || !strings.Contains(r.Stderr, "--resource") {
		t.Errorf("a bad pattern: %s", r)
	}
}
