//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// topReport mirrors the documented schema of kubectl rv conflicts --view
// top and --view wasted -o json (docs/conflicts.md).
type topReport struct {
	Kind   string   `json:"kind"`
	By     []string `json:"by"`
	Total  int      `json:"total"`
	Groups []struct {
		Key     map[string]any `json:"key"`
		Count   int            `json:"count"`
		Objects []struct {
			Object string `json:"object"`
			Count  int    `json:"count"`
		} `json:"objects"`
	} `json:"groups"`
	Wasted   []wastedRow  `json:"wasted"`
	Findings []topFinding `json:"findings"`
}

// wastedRow is one writer of the wasted view.
type wastedRow struct {
	Writer                                string
	Attempts, AlreadyExists, Lost, Wasted int
	// NoOps is nil when the log cannot tell (Metadata level).
	NoOps *int
}

// topFinding is one --fail-on finding of the top report.
type topFinding struct {
	Kind, Client, User, Pod, UserAgent, Object string
	Count                                      int
}

// runTop runs kubectl rv conflicts ARGS -o json, wants exit code, and
// returns the report and the run.
func runTop(t *testing.T, code int, args ...string) (topReport, string) {
	t.Helper()
	r := cluster.RV(t, append(append([]string{"conflicts"}, args...), "-o", "json")...)
	if r.Code != code {
		t.Fatalf("kubectl rv conflicts %s: want exit %d: %s", strings.Join(args, " "), code, r)
	}
	var rep topReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.Kind != "TopReport" {
		t.Fatalf("kubectl rv conflicts %s: want a TopReport (%v):\n%s", strings.Join(args, " "), err, r)
	}
	return rep, r.Stderr
}

// logKey is an event's key by the keys by, as the log itself says:
// the user (impersonated when so), the verb, resource[.group] and status
// code, joined by " | ".
func logKey(e rawEvent, by []string) string {
	var parts []string
	for _, k := range by {
		switch k {
		case "user":
			u := e.User.Username
			if e.ImpersonatedUser != nil {
				u = e.ImpersonatedUser.Username
			}
			parts = append(parts, u)
		case "verb":
			parts = append(parts, e.Verb)
		case "resource":
			r := e.ObjectRef.Resource
			if e.ObjectRef.APIGroup != "" {
				r += "." + e.ObjectRef.APIGroup
			}
			parts = append(parts, r)
		case "status":
			parts = append(parts, fmt.Sprint(e.ResponseStatus.Code))
		}
	}
	return strings.Join(parts, " | ")
}

// reportCounts is the report's count per group, keyed as logKey keys.
func reportCounts(rep topReport, by []string) map[string]int {
	out := map[string]int{}
	for _, g := range rep.Groups {
		var parts []string
		for _, k := range by {
			parts = append(parts, fmt.Sprint(g.Key[k]))
		}
		out[strings.Join(parts, " | ")] += g.Count
	}
	return out
}

// diffCounts lists the keys whose counts differ, as "key: GOT N, WANT
// M" with the names of the two counts.
func diffCounts(got, want map[string]int, gotName, wantName string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			out = append(out, fmt.Sprintf("%s: %s %d, %s %d", k, gotName, got[k], wantName, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: %s %d, %s 0", k, gotName, got[k], wantName))
		}
	}
	return out
}

// TestConflictsTopMatchesClientsAndLog: on the busy scene's log, the top
// view's count of every group, by user, verb, resource and status and by
// each alone, is the log's own count of completed requests (each
// auditID once, also when the log is beside its gzip copy); the load clients' rows are what each client counted of
// its own requests, and the GET loop's row names its object first.
func TestConflictsTopMatchesClientsAndLog(t *testing.T) {
	s := sharedBusyScene(t)
	evs := rawEvents(t, s.log)
	checkClientsInLog(t, s, evs)
	all := []string{"user", "verb", "resource", "status"}
	for _, by := range [][]string{all, {"user"}, {"verb"}, {"resource"}, {"status"}} {
		args := []string{"--audit-log", s.log, "--view", "top", "--top", "0"}
		for _, k := range by {
			args = append(args, "--by", k)
		}
		rep, _ := runTop(t, 0, args...)
		want := map[string]int{}
		for _, e := range evs {
			want[logKey(e, by)]++
		}
		if d := diffCounts(reportCounts(rep, by), want, "report", "log"); len(d) > 0 || rep.Total != len(evs) {
			t.Errorf("--by %v: %d events counted, the log has %d; groups that differ:\n%s", by, rep.Total, len(evs), strings.Join(d, "\n"))
		}
		if len(by) == len(all) {
			checkClientRows(t, s, rep)
			// The log beside its gzip copy: each auditID counted once.
			args[1] = s.rotated
			rep, _ = runTop(t, 0, args...)
			if d := diffCounts(reportCounts(rep, by), want, "report", "log"); len(d) > 0 || rep.Total != len(evs) {
				t.Errorf("the log beside its copy, --by %v: %d events counted, the log has %d; groups that differ:\n%s", by, rep.Total, len(evs), strings.Join(d, "\n"))
			}
		}
	}
	get := s.clients[clientGetLoop]
	rep, _ := runTop(t, 0, "--audit-log", s.log, "--view", "top", "--by", "user")
	for _, g := range rep.Groups {
		if g.Key["user"] != get.user {
			continue
		}
		if len(g.Objects) == 0 || g.Objects[0].Object != get.objects[0] || g.Objects[0].Count != get.requests("get", 200) {
			t.Errorf("%s GET %s %d times: its row's objects are %+v", clientGetLoop, get.objects[0], get.requests("get", 200), g.Objects)
		}
		return
	}
	t.Errorf("the top view by user has no row for %s", get.user)
}

// checkClientsInLog: the log holds each load client's requests as the
// client counted them; else the scene proves nothing.
func checkClientsInLog(t *testing.T, s *busyScene, evs []rawEvent) {
	t.Helper()
	for name, c := range s.clients {
		inLog := map[string]int{}
		for _, e := range evs {
			if logKey(e, []string{"user"}) == c.user {
				inLog[logKey(e, []string{"verb", "status"})]++
			}
		}
		t.Logf("%s: its own log %v, no-ops %d, 409 AlreadyExists %d", name, c.counts(), c.noOps, c.alreadyExists)
		if d := diffCounts(inLog, c.counts(), "audit log", "its own log"); len(d) > 0 || len(inLog) == 0 {
			t.Fatalf("%s: the audit log and its own log differ:\n%s", name, strings.Join(d, "\n"))
		}
	}
}

// checkClientRows: the report's rows of each load client, by verb and
// status, are its own counts.
func checkClientRows(t *testing.T, s *busyScene, rep topReport) {
	t.Helper()
	for name, c := range s.clients {
		got := map[string]int{}
		for _, g := range rep.Groups {
			if g.Key["user"] == c.user {
				got[fmt.Sprintf("%v | %v", g.Key["verb"], g.Key["status"])] += g.Count
			}
		}
		if d := diffCounts(got, c.counts(), "report", "its own log"); len(d) > 0 {
			t.Errorf("%s: the report's rows by verb and status differ from its own log:\n%s", name, strings.Join(d, "\n"))
		}
	}
}

// counts is what the client counted, keyed "verb | status".
func (c *sceneClient) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for verb, codes := range c.codes {
		for code, n := range codes {
			out[fmt.Sprintf("%s | %d", verb, code)] += n
		}
	}
	return out
}

// TestConflictsWastedMatchesClients: the wasted view counts the
// create-existing client's 409 AlreadyExists and the no-op client's
// updates that kept their resourceVersion as each counted them; the
// create-existing client writes at Metadata level, where a no-op cannot
// be known: its noOps is null.
func TestConflictsWastedMatchesClients(t *testing.T) {
	s := sharedBusyScene(t)
	rep, _ := runTop(t, 0, "--audit-log", s.log, "--view", "wasted")
	creates, noOps := s.clients[clientCreates], s.clients[clientNoOps]
	for _, tc := range []struct {
		c                               *sceneClient
		manager                         string
		attempts, alreadyExists, wasted int
		noOps                           *int
	}{
		{creates, clientCreates, creates.requests("create", 409) + creates.requests("patch", 200), creates.alreadyExists, creates.alreadyExists, nil},
		{noOps, clientNoOps, noOps.requests("update", 200), 0, noOps.noOps, &noOps.noOps},
	} {
		writer := tc.c.user + "/" + tc.manager + "@" + tc.c.pod
		i := slices.IndexFunc(rep.Wasted, func(w wastedRow) bool { return w.Writer == writer })
		if i < 0 {
			t.Errorf("the wasted view has no row for %s", writer)
			continue
		}
		w := rep.Wasted[i]
		if w.Attempts != tc.attempts || w.AlreadyExists != tc.alreadyExists || w.Lost != 0 || w.Wasted != tc.wasted || fmt.Sprint(deref(w.NoOps)) != fmt.Sprint(deref(tc.noOps)) {
			t.Errorf("%s: attempts %d, alreadyExists %d, noOps %v, lost %d, wasted %d; its own log: attempts %d, alreadyExists %d, noOps %v, lost 0, wasted %d",
				writer, w.Attempts, w.AlreadyExists, deref(w.NoOps), w.Lost, w.Wasted, tc.attempts, tc.alreadyExists, deref(tc.noOps), tc.wasted)
		}
	}
}

// deref is *p, or "null" when p is nil.
func deref(p *int) any {
	if p == nil {
		return "null"
	}
	return *p
}

// TestConflictsTopFailOnHotRead: --fail-on hot-read finds the GET loop,
// which reads its object at most once per getLoopPace: exit 1 and the
// finding names the client and the object, on stderr and in the JSON; at
// a rate above the loop's it is no finding and the exit is 0.
func TestConflictsTopFailOnHotRead(t *testing.T) {
	s := sharedBusyScene(t)
	c := s.clients[clientGetLoop]
	most := float64(time.Second) / float64(getLoopPace)
	rep, stderr := runTop(t, 1, "--audit-log", s.log, "--view", "top", "--fail-on", "hot-read", "--hot-rate", fmt.Sprint(most/8), "--hot-for", hotFor.String())
	f := wantFinding(t, rep, "hot-read", c, c.objects[0], most/8)
	if f != nil && (!strings.Contains(stderr, c.objects[0]) || !strings.Contains(stderr, c.user)) {
		t.Errorf("stderr does not name %s and %s:\n%s", c.user, c.objects[0], stderr)
	}
	rep, _ = runTop(t, 0, "--audit-log", s.log, "--view", "top", "--fail-on", "hot-read", "--hot-rate", fmt.Sprint(most*1.25), "--hot-for", hotFor.String())
	if len(rep.Findings) > 0 {
		t.Errorf("at %g per second, above the GET loop's most, findings %+v", most*1.25, rep.Findings)
	}
}

// hotFor is the span the tests' --fail-on runs judge: the load clients
// run for more than hotFor + hotFor/4.
const hotFor = 5 * time.Second

// wantFinding returns the report's finding of kind for client c and
// object, or fails the test. Its count is at most the client's requests
// and at least rate per second over hotFor.
func wantFinding(t *testing.T, rep topReport, kind string, c *sceneClient, object string, rate float64) *topFinding {
	t.Helper()
	for i, f := range rep.Findings {
		if f.Kind != kind || f.User != c.user || f.Object != object {
			continue
		}
		if f.Pod != c.pod || f.UserAgent != c.userAgent || !strings.HasPrefix(f.Client, c.user+"@"+c.pod) || !strings.Contains(f.Client, c.userAgent) {
			t.Errorf("%s of %s: the client is %q (pod %q, user agent %q), want %s@%s (%s)", kind, object, f.Client, f.Pod, f.UserAgent, c.user, c.pod, c.userAgent)
		}
		if n := c.total(); f.Count > n || float64(f.Count) < rate*hotFor.Seconds() {
			t.Errorf("%s of %s by %s: count %d, want between %g per second over %s and its %d requests", kind, object, c.user, f.Count, rate, hotFor, n)
		}
		return &rep.Findings[i]
	}
	t.Errorf("no %s finding for %s on %s; findings: %+v", kind, c.user, object, rep.Findings)
	return nil
}

// total is how many requests the client sent that were answered.
func (c *sceneClient) total() int {
	n := 0
	for _, v := range c.counts() {
		n += v
	}
	return n
}

// TestConflictsTopRealCases: the three cases of issue #49, played in
// miniature by the busy scene's load clients, are each found by
// --fail-on, in the top and the wasted view: exit 1, with the finding's
// kind, client and object.
func TestConflictsTopRealCases(t *testing.T) {
	s := sharedBusyScene(t)
	type want struct {
		kind, object string
	}
	get, creates, noOps := s.clients[clientGetLoop], s.clients[clientCreates], s.clients[clientNoOps]
	for _, tc := range []struct {
		name   string
		c      *sceneClient
		failOn string
		rate   float64
		want   []want
	}{
		// One client GETs one object over and over.
		{"console-operator", get, "hot-read", 5, []want{{"hot-read", get.objects[0]}}},
		// Creates that always meet 409 AlreadyExists, between gets and
		// patches of the same object.
		{"kubewarden", creates, "hot-read,wasted-write", 0.5, []want{{"wasted-write", creates.objects[0]}, {"hot-read", creates.objects[0]}}},
		// GET and PUT of each object on every pass; the PUTs change
		// nothing (RequestResponse level tells).
		{"roks", noOps, "hot-read,wasted-write", 1, []want{
			{"hot-read", noOps.objects[0]}, {"wasted-write", noOps.objects[0]},
			{"hot-read", noOps.objects[1]}, {"wasted-write", noOps.objects[1]},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, view := range []string{"top", "wasted"} {
				rep, _ := runTop(t, 1, "--audit-log", s.log, "--view", view, "--fail-on", tc.failOn, "--hot-rate", fmt.Sprint(tc.rate), "--hot-for", hotFor.String())
				for _, w := range tc.want {
					wantFinding(t, rep, w.kind, tc.c, w.object, tc.rate)
				}
			}
		})
	}
}

// TestConflictsTopScope: the scope and filter flags choose what the top
// view counts, reads as well as writes: its groups by user are the log's
// own counts of the requests that match.
func TestConflictsTopScope(t *testing.T) {
	s := sharedBusyScene(t)
	evs := rawEvents(t, s.log)
	for _, tc := range []struct {
		args []string
		keep func(e rawEvent) bool
	}{
		{[]string{"-n", s.topNS}, func(e rawEvent) bool { return e.ObjectRef.Namespace == s.topNS }},
		{[]string{"--verb", "get", "--verb", "create"}, func(e rawEvent) bool { return e.Verb == "get" || e.Verb == "create" }},
		{[]string{"--status", "409"}, func(e rawEvent) bool { return e.ResponseStatus.Code == 409 }},
		{[]string{"--resource", "cm"}, func(e rawEvent) bool { return e.ObjectRef.Resource == "configmaps" && e.ObjectRef.APIGroup == "" }},
		{[]string{"-n", s.topNS, "--object", "cm/hot"}, func(e rawEvent) bool {
			return e.ObjectRef.Namespace == s.topNS && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Name == "hot"
		}},
	} {
		rep, _ := runTop(t, 0, append([]string{"--audit-log", s.log, "--view", "top", "--by", "user"}, tc.args...)...)
		want, n := map[string]int{}, 0
		for _, e := range evs {
			if tc.keep(e) {
				want[logKey(e, []string{"user"})]++
				n++
			}
		}
		if d := diffCounts(reportCounts(rep, []string{"user"}), want, "report", "log"); len(d) > 0 || rep.Total != n || n == 0 {
			t.Errorf("%v: %d requests counted, the log has %d such; users that differ:\n%s", tc.args, rep.Total, n, strings.Join(d, "\n"))
		}
	}
}
