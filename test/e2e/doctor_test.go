//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// doctorReport mirrors the documented schema of kubectl rv doctor -o json
// (docs/doctor.md).
type doctorReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Summary    struct {
		Resources, Forbidden, Gone, Pass, Fail, Warn, Skip int
	} `json:"summary"`
	Resources []struct {
		Group, Version, Resource, Kind string
		Warning                        string
		Gone                           bool
		Checks                         []doctorCheck
	} `json:"resources"`
}

type doctorCheck struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Observed string            `json:"observed"`
	Values   map[string]string `json:"values"`
}

func parseDoctor(t *testing.T, out string) doctorReport {
	t.Helper()
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "DoctorReport" {
		t.Fatalf("doctor -o json: apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	return rep
}

// checks returns the checks of the resource named like kubectl does.
func (r doctorReport) checks(t *testing.T, name string) map[string]doctorCheck {
	t.Helper()
	for _, res := range r.Resources {
		full := res.Resource
		if res.Group != "" {
			full += "." + res.Group
		}
		if full == name {
			m := map[string]doctorCheck{}
			for _, c := range res.Checks {
				m[c.ID] = c
			}
			return m
		}
	}
	t.Fatalf("no resource %s in the report", name)
	return nil
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// doctorNamespace makes a namespace with n ConfigMaps besides the
// kube-root-ca.crt one the controller manager publishes (waited for, so
// that the count holds still).
func doctorNamespace(t *testing.T, n int) (string, []*corev1.ConfigMap) {
	t.Helper()
	ns := cluster.Namespace(t)
	cs := cluster.Clientset(t, "e2e-setup")
	ctx := context.Background()
	var made []*corev1.ConfigMap
	for i := range n {
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, cm)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err == nil {
			return ns, made
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-root-ca.crt was not published in %s", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDoctorRealControlPlaneKeepsTheContract runs every check on ConfigMaps
// and on a custom resource of the real API server, after compacting etcd
// so that expired versions exist, and asserts what each check saw.
func TestDoctorRealControlPlaneKeepsTheContract(t *testing.T) {
	ns, made := doctorNamespace(t, 5)
	gvr := lagCRD(t, "Sprocket", map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, true)
	dyn := cluster.Dynamic(t, "e2e-setup").Resource(gvr).Namespace(ns)
	for i := range 3 {
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.Group + "/v1", "kind": "Sprocket",
			"metadata": map[string]any{"name": fmt.Sprintf("s%d", i)}, "spec": map[string]any{"size": int64(i)},
		}}
		if _, err := dyn.Create(context.Background(), cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expireHistory(t, ns, made[0])

	r := cluster.RV(t, "doctor", "configmaps", "sprockets."+gvr.Group, "-n", ns, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("doctor on a healthy server: %s", r)
	}
	rep := parseDoctor(t, r.Stdout)
	if rep.Summary.Resources != 2 || rep.Summary.Fail != 0 || rep.Summary.Skip > 2 {
		t.Errorf("summary = %+v, want 2 resources, every check passed (but for bookmarks not owed)", rep.Summary)
	}
	assertHealthy(t, rep.checks(t, "configmaps"), 7)
	assertHealthy(t, rep.checks(t, "sprockets."+gvr.Group), 3)
}

// expireHistory compacts etcd and restarts the API server, so that its
// watch cache, which replays history back to its first list until it
// restarts, lists afresh: versions before the compaction are then gone for
// lists and watches alike. A write after it keeps the version just before
// the lists' readable, for list-exact.
func expireHistory(t *testing.T, ns string, cm *corev1.ConfigMap) {
	t.Helper()
	compact(t, "/registry/configmaps/"+ns+"/"+cm.Name, atoi(t, cm.ResourceVersion))
	cluster.RestartAPIServer(t)
	cluster.MustKubectl(t, "create", "configmap", "after-compaction", "-n", ns)
}

// bookmarkExcused: bookmarks are best effort. kube-apiserver sends one only
// when its watch cache has a version newer than the watch's position; when
// the list's version is the type's own latest write, the replayed event
// moves the watch there, and no bookmark is owed (skip, saying so). A warn
// must say which newer version went unbookmarked.
func bookmarkExcused(c doctorCheck) bool {
	return (c.Status == "skip" && strings.Contains(c.Observed, "none was owed")) ||
		(c.Status == "warn" && c.Values["newest"] != "")
}

// assertHealthy checks each verdict and the values behind it for a list of
// items objects.
func assertHealthy(t *testing.T, c map[string]doctorCheck, items int) {
	t.Helper()
	for id, ch := range c {
		if ch.Status != "pass" && !(id == "watch-bookmarks" && bookmarkExcused(ch)) {
			t.Errorf("%s: %s (%s), want pass", id, ch.Status, ch.Observed)
		}
	}
	rv := atoi(t, c["list-consistent"].Values["resourceVersion"])
	want := map[string]map[string]string{
		"list-consistent":          {"items": strconv.Itoa(items)},
		"list-exact":               {"asked": strconv.FormatInt(rv-1, 10), "got": strconv.FormatInt(rv-1, 10)},
		"list-exact-expired":       {"asked": "1", "code": "410"},
		"list-future":              {"asked": strconv.FormatInt(rv+1_000_000, 10), "code": "504"},
		"items-have-rv":            {"items": strconv.Itoa(items), "missing": "0"},
		"paging":                   {"pages": "3", "paged": strconv.Itoa(items), "whole": strconv.Itoa(items)},
		"comparable-rvs":           {"checked": strconv.Itoa(items + 1)},
		"watch-initial-events-end": {"added": strconv.Itoa(items), "listed": strconv.Itoa(items)},
		"watch-expired":            {"code": "410", "reason": "Expired"},
		"consistent-list-latency":  {"samples": "5"},
	}
	for id, kv := range want {
		for k, v := range kv {
			if got := c[id].Values[k]; got != v {
				t.Errorf("%s: %s = %q, want %q (%s)", id, k, got, v, c[id].Observed)
			}
		}
	}
	if got := atoi(t, c["list-not-older-than"].Values["got"]); got < rv {
		t.Errorf("list-not-older-than: got %d, older than %d", got, rv)
	}
	if newest := atoi(t, c["list-rv-covers-items"].Values["newestItem"]); newest > rv || newest <= 1 {
		t.Errorf("list-rv-covers-items: newest item %d against list %d", newest, rv)
	}
	// Bookmarks are best effort (kube-apiserver sends one only when its
	// watch cache has moved past the watch's start): a warn is allowed,
	// but a bookmark that comes must be at or after where the watch began.
	if b := c["watch-bookmarks"]; b.Status == "pass" {
		if atoi(t, b.Values["bookmark"]) < atoi(t, b.Values["from"]) {
			t.Errorf("watch-bookmarks: %+v", b)
		}
		atoi(t, b.Values["firstBookmarkMs"])
	}
	// Durations are reported, not judged here: only that they are there.
	atoi(t, c["list-future"].Values["ms"])
	atoi(t, c["consistent-list-latency"].Values["consistentMs"])
	atoi(t, c["consistent-list-latency"].Values["cachedMs"])
}

// everything is the one run of `doctor -o json` over every type of the
// shared control plane, which two tests read: it takes most of a minute.
var everything struct {
	once sync.Once
	r    framework.Result
}

func doctorEverything(t *testing.T) framework.Result {
	t.Helper()
	everything.once.Do(func() {
		start := time.Now()
		everything.r = cluster.RV(t, "doctor", "-o", "json")
		t.Logf("doctor over every resource took %s", time.Since(start).Round(time.Millisecond))
	})
	return everything.r
}

// TestDoctorEveryResource probes every listable resource of the control
// plane, as kubectl rv doctor does by default: all keep the contract.
func TestDoctorEveryResource(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	r := doctorEverything(t)
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("doctor over every resource: %s", r)
	}
	rep := parseDoctor(t, r.Stdout)
	// Name every check that did not pass, so that a failure says which
	// endpoint broke which rule rather than dumping the whole report.
	for _, res := range rep.Resources {
		for _, c := range res.Checks {
			if c.Status != "pass" {
				t.Logf("%s.%s %s: %s (%s) %v", res.Resource, res.Group, c.ID, c.Status, c.Observed, c.Values)
			}
		}
	}
	t.Logf("summary: %+v", rep.Summary)
	if r.Code != 0 || rep.Summary.Resources < 30 || rep.Summary.Fail != 0 || rep.Summary.Forbidden != 0 {
		t.Fatalf("exit %d, summary = %+v, want exit 0, 30+ resources and no failure (the checks that did not pass are logged above); stderr:\n%s", r.Code, rep.Summary, r.Stderr)
	}
	table := cluster.RV(t, "doctor", "pods,deployments.apps")
	if table.Code != 0 || !strings.Contains(table.Stdout, "deployments.apps") || !strings.Contains(table.Stdout, "2 resources:") {
		t.Errorf("doctor table: %s", table)
	}
}

// TestDoctorFaultyEndpoints puts a proxy that breaks one rule at a time in
// front of the real API server: each fault turns exactly its check to
// fail, and the report says what was seen.
func TestDoctorFaultyEndpoints(t *testing.T) {
	ns, made := doctorNamespace(t, 5)
	expireHistory(t, ns, made[0])
	tests := []struct {
		fault    fault
		check    string
		observed string
		// also are verdicts the fault changes besides its own fail.
		also map[string]string
	}{
		{dropInitialEventsEnd, "watch-initial-events-end", "no BOOKMARK annotated k8s.io/initial-events-end", nil},
		{stripItemRVs, "items-have-rv", "7 of 7 items carry no resourceVersion", map[string]string{"list-rv-covers-items": "skip"}},
		{ignoreRVMatch, "list-exact", "resourceVersionMatch=Exact was not honoured", map[string]string{"list-exact-expired": "skip"}},
		{compactedWatchOK, "watch-expired", "opened and closed without a 410 Gone, and 7 of 7 listed objects never arrived", nil},
		{slowConsistentLists, "consistent-list-latency", "the consistent read waits", nil},
		{stripWatchEventRVs, "watch-events-have-rv", "carry no resourceVersion", nil},
	}
	t.Parallel() // after expireHistory's restart: see TestMain
	for _, tc := range tests {
		t.Run(string(tc.fault), func(t *testing.T) {
			t.Parallel() // each fault has its own proxy
			kc := badProxy(t, tc.fault)
			r := cluster.RV(t, "doctor", "configmaps", "-n", ns, "-o", "json", "--kubeconfig", kc)
			if r.Code != 1 {
				t.Fatalf("want exit 1 for a failed check: %s", r)
			}
			c := parseDoctor(t, r.Stdout).checks(t, "configmaps")
			for id, ch := range c {
				want := "pass"
				switch {
				case id == "watch-bookmarks" && bookmarkExcused(ch):
					want = ch.Status // best effort, as above
				case id == tc.check:
					want = "fail"
				case tc.also[id] != "":
					want = tc.also[id]
				}
				if ch.Status != want {
					t.Errorf("%s: %s (%s), want %s", id, ch.Status, ch.Observed, want)
				}
			}
			if !strings.Contains(c[tc.check].Observed, tc.observed) {
				t.Errorf("%s observed %q, want it to say %q", tc.check, c[tc.check].Observed, tc.observed)
			}
		})
	}
}

// TestDoctorPermissions: a read-only user gets every verdict; a user who
// may read only ConfigMaps of one namespace gets those with a warning for
// the rest (exit 0, nothing failed); a user who may read nothing gets exit 3.
func TestDoctorPermissions(t *testing.T) {
	t.Parallel() // see TestMain: reads one namespace of its own
	ns, _ := doctorNamespace(t, 2)
	r := cluster.RV(t, "doctor", "configmaps", "-n", ns, "--context", "rv-readonly", "-o", "json")
	if r.Code != 0 || parseDoctor(t, r.Stdout).Summary.Pass == 0 {
		t.Errorf("read-only user: %s", r)
	}
	grantConfigMapReader(t, ns, "rv-nobody")
	r = cluster.RV(t, "doctor", "configmaps,secrets", "-n", ns, "--context", "rv-nobody", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("a user limited to one namespace's ConfigMaps: want partial results and exit 0: %s", r)
	}
	rep := parseDoctor(t, r.Stdout)
	if rep.Summary.Forbidden != 1 || rep.Summary.Fail != 0 || !strings.Contains(r.Stderr, "warning:") {
		t.Errorf("partial results: summary %+v, stderr %q", rep.Summary, r.Stderr)
	}
	if c := rep.checks(t, "configmaps"); c["list-consistent"].Status != "pass" {
		t.Errorf("configmaps as the limited user: %+v", c["list-consistent"])
	}
	r = cluster.RV(t, "doctor", "secrets", "-n", ns, "--context", "rv-nobody")
	if r.Code != 3 || !strings.Contains(r.Stderr, "forbidden") {
		t.Errorf("nothing readable: want exit 3 naming the refusal: %s", r)
	}
}

// TestDoctorWriteProbe: with --write-probe a ConfigMap's versions increase
// across create, updates and delete, and its watch sees them in order;
// the probe leaves nothing behind.
func TestDoctorWriteProbe(t *testing.T) {
	ns := cluster.Namespace(t)
	r := cluster.RV(t, "doctor", "configmaps", "-n", ns, "--write-probe", ns, "--check", "write-rvs-increase", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("write probe: %s", r)
	}
	c := parseDoctor(t, r.Stdout).Resources
	last := c[len(c)-1].Checks
	if len(last) != 1 || last[0].ID != "write-rvs-increase" || last[0].Status != "pass" {
		t.Fatalf("write probe verdict: %+v", last)
	}
	written := strings.Split(last[0].Values["written"], ",")
	if len(written) != 3 || atoi(t, written[0]) >= atoi(t, written[1]) || atoi(t, written[1]) >= atoi(t, written[2]) {
		t.Errorf("written versions %v do not increase", written)
	}
	if out := cluster.MustKubectl(t, "get", "configmaps", "-n", ns, "-o", "name"); strings.Contains(out, "kubectl-rv-doctor-") {
		t.Errorf("the probe ConfigMap was left behind: %s", out)
	}
	// The probe's verdict joins the configmaps row instead of a second one.
	r = cluster.RV(t, "doctor", "configmaps", "-n", ns, "--write-probe", ns, "-o", "json")
	rep := parseDoctor(t, r.Stdout)
	if r.Code != 0 || rep.Summary.Resources != 1 || rep.checks(t, "configmaps")["write-rvs-increase"].Status != "pass" {
		t.Errorf("write probe beside the other checks: summary %+v; %s", rep.Summary, r)
	}
	// A namespace that does not exist is bad input, a refused create the
	// cluster's refusal: both before any check runs, and nothing printed.
	offset := auditLogSize(t)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--write-probe", "no-such-namespace"}, 2, "no such namespace"},
		{[]string{"--write-probe", ns, "--context", "rv-readonly"}, 3, "refused"},
	} {
		r := cluster.RV(t, append([]string{"doctor", "configmaps", "-n", ns}, tc.args...)...)
		if r.Code != tc.code || !strings.Contains(r.Stderr, tc.says) || r.Stdout != "" {
			t.Errorf("%v: want exit %d saying %q and no report: %s", tc.args, tc.code, tc.says, r)
		}
	}
	// Nothing was listed for the refused runs: only the dry-run creates.
	if n := auditLines(t, offset, func(l string) bool {
		return strings.Contains(l, `"verb":"list"`) && strings.Contains(l, "/namespaces/"+ns+"/configmaps")
	}); n != 0 {
		t.Errorf("%d configmap lists in %s after a refused --write-probe: checks ran", n, ns)
	}
}

// TestDoctorTypeRemovedDuringTheRun deletes a CRD while doctor holds a watch
// on it (the API server's audit log says when the watch started). The
// server then ends the watch and answers 404 to the rest, which breaks no
// contract: doctor reports the type as removed during the run, not as a
// failure, and exits 0.
func TestDoctorTypeRemovedDuringTheRun(t *testing.T) {
	ns := cluster.Namespace(t)
	gvr := lagCRD(t, "Vanisher", nil, false)
	dyn := cluster.Dynamic(t, "e2e-setup").Resource(gvr).Namespace(ns)
	for i := range 3 {
		cr := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.Group + "/v1", "kind": "Vanisher", "metadata": map[string]any{"name": fmt.Sprintf("v%d", i)},
		}}
		if _, err := dyn.Create(context.Background(), cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	from := auditLogSize(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// A long watch timeout keeps the bookmark watch open while the CRD goes.
	d := cluster.Command(ctx, "kubectl", "rv", "doctor", gvr.Resource+"."+gvr.Group, "-n", ns, "--watch-timeout", "60s", "-o", "json")
	var stdout, stderr strings.Builder
	d.Stdout, d.Stderr = &stdout, &stderr
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	waitForAudit(t, from, func(l string) bool {
		return strings.Contains(l, `"verb":"watch"`) && strings.Contains(l, `"resource":"`+gvr.Resource+`"`) &&
			strings.Contains(l, `"userAgent":"kubectl-rv/`) && strings.Contains(l, `"stage":"ResponseStarted"`)
	})
	deleteCRD(t, gvr.Resource+"."+gvr.Group)
	err := d.Wait()
	r := framework.Result{Code: d.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil && r.Code != 1 {
		t.Fatalf("doctor: %v\n%s", err, r)
	}
	if r.Code != 0 {
		t.Fatalf("a type removed during the run is no failure: want exit 0: %s", r)
	}
	rep := parseDoctor(t, r.Stdout)
	if rep.Summary.Resources != 1 || rep.Summary.Gone != 1 || rep.Summary.Fail != 0 {
		t.Errorf("summary = %+v, want 1 resource, gone, no failure", rep.Summary)
	}
	res := rep.Resources[0]
	if !res.Gone || len(res.Checks) != 0 || !strings.Contains(res.Warning, "removed during the run") || !strings.Contains(res.Warning, "404") {
		t.Errorf("resource = %+v, want gone, no checks, a warning naming the 404", res)
	}
}

func auditLogSize(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(cluster.AuditLog)
	if err != nil {
		t.Fatalf("the control plane's audit log: %v", err)
	}
	return fi.Size()
}

// auditLines counts the lines of the audit log from offset that match.
func auditLines(t *testing.T, offset int64, match func(string) bool) int {
	t.Helper()
	b, err := os.ReadFile(cluster.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) < offset {
		t.Fatalf("the audit log was rotated during the test")
	}
	n := 0
	if int64(len(b)) > offset {
		for _, l := range strings.Split(string(b[offset:]), "\n") {
			if match(l) {
				n++
			}
		}
	}
	return n
}

// waitForAudit polls the audit log from offset until a line matches.
func waitForAudit(t *testing.T, offset int64, match func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(cluster.AuditLog)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) < offset {
			t.Fatalf("the audit log was rotated during the test")
		}
		for _, l := range strings.Split(string(b[offset:]), "\n") {
			if match(l) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no matching event in the audit log %s within a minute", cluster.AuditLog)
}

// TestDoctorSummarisesWarningsOfUnnamedTypes: the API server warns on
// every list of v1 Endpoints (deprecated). doctor over every type, which
// the user did not name Endpoints in, sums such warnings up in one line;
// doctor endpoints passes the server's warning as kubectl shows it.
func TestDoctorSummarisesWarningsOfUnnamedTypes(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	k := cluster.Kubectl(t, "get", "endpoints", "-A")
	var serverWarning string
	for _, l := range strings.Split(k.Stderr, "\n") {
		if strings.HasPrefix(l, "Warning: ") && strings.Contains(l, "Endpoints") {
			serverWarning = l
		}
	}
	if serverWarning == "" {
		t.Fatalf("kubectl get endpoints showed no warning from the server: %s", k)
	}
	all := doctorEverything(t)
	if strings.Contains(all.Stderr, serverWarning) {
		t.Errorf("doctor over every type printed the server's warning about a type the user did not name:\n%s", all.Stderr)
	}
	var summary []string
	for _, l := range strings.Split(all.Stderr, "\n") {
		if strings.Contains(l, "for types you did not name") {
			summary = append(summary, l)
		}
	}
	if len(summary) != 1 || !strings.Contains(summary[0], "endpoints") {
		t.Errorf("want one summary line naming endpoints, got %q; stderr:\n%s", summary, all.Stderr)
	}
	named := cluster.RV(t, "doctor", "endpoints")
	if !strings.Contains(named.Stderr, serverWarning) || strings.Contains(named.Stderr, "for types you did not name") {
		t.Errorf("doctor endpoints: want the server's %q and no summary; stderr:\n%s", serverWarning, named.Stderr)
	}
}
