package conflicts

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/chfake"
	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/internal/cwlogsfake"
	"github.com/kubectl-rv/kubectl-rv/internal/osfake"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/cloudwatch"
)

// sourceScene is a log of two writers racing on a ConfigMap with
// read-modify-write, 409s and retries, and their reads.
func sourceScene() []string {
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var lines []string
	for i := range 200 {
		w := []string{"stock", "pricing"}[i%2]
		verb, code := "update", 200
		switch {
		case i%5 == 0:
			verb = "get"
		case i%3 == 0:
			code = 409
		}
		at := base.Add(time.Duration(i) * 100 * time.Millisecond).Format(time.RFC3339Nano)
		done := base.Add(time.Duration(i)*100*time.Millisecond + 2*time.Millisecond).Format(time.RFC3339Nano)
		lines = append(lines, fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/configmaps/inv?fieldManager=%s","verb":%q,"user":{"username":"system:serviceaccount:shop:%s"},"userAgent":"%s/v1","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1","resourceVersion":"%d"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`, i, w, verb, w, w, 500+i/3, code, at, done))
	}
	return lines
}

// TestConflictsSourceCloudWatch: --source cloudwatch:GROUP, with the
// AWS SDK's default chain pointed at a local server that speaks
// CloudWatch Logs' protocol (AWS_ENDPOINT_URL), gives the report of the
// log's writes (the filter keeps no reads), and prints no credential.
func TestConflictsSourceCloudWatch(t *testing.T) {
	lines := sourceScene()
	srv := &cwlogsfake.Server{Group: "/aws/eks/demo/cluster", N: len(lines), PageEvents: 17, ScanLimit: 40, Events: func(i int) []cwlogsfake.Event {
		return []cwlogsfake.Event{{Stream: "kube-apiserver-audit-0a1b", Timestamp: int64(i), Message: lines[i], Fields: sceneFields(lines[i])}}
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	writes, want := sourceWant(t, lines)
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": ts.URL, "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIEXAMPLEKEY",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"), "AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	got, errOut, code := run(t, "conflicts", "--source", "cloudwatch:/aws/eks/demo/cluster", "--view", "writers", "-o", "json")
	if code != 0 {
		t.Fatalf("--source: exit %d: %s", code, errOut)
	}
	if a, b := withoutInput(t, want), withoutInput(t, got); a != b || !strings.Contains(a, `"conflicts":`) {
		t.Errorf("--source gives another report than the log's writes:\nlog:    %s\nsource: %s", a, b)
	}
	// The SDK's retryer may send a request again (its attempt header says
	// so): the events of a retried request are the same page read twice,
	// not events the filter should have dropped.
	retried, resent := srv.Retried()
	if srv.Sent()-resent != len(writes) || len(srv.Requests()) < len(lines)/srv.ScanLimit {
		t.Errorf("the server sent %d events in %d pages (%d of them again, in %d requests the SDK retried): want the %d writes, paged",
			srv.Sent(), len(srv.Requests()), resent, retried, len(writes))
	}
	if retried > 0 {
		t.Logf("the SDK retried %d requests (%d events sent again)", retried, resent)
	}
	if p := srv.Requests()[0].FilterPattern; p == nil || *p != cloudwatch.FilterPattern() {
		t.Errorf("filter pattern %v, want %s", p, cloudwatch.FilterPattern())
	}
	out, errOut, code := run(t, "conflicts", "--source", "cloudwatch:/aws/eks/absent/cluster")
	if code != 3 || !strings.Contains(errOut, "cloudwatch:/aws/eks/absent/cluster") || !strings.Contains(errOut, "ResourceNotFoundException") || strings.Contains(errOut, "cluster at") {
		t.Errorf("an absent log group: exit %d, stderr %q; want 3 naming it, not the Kubernetes cluster", code, errOut)
	}
	for _, s := range []string{got, errOut, out} {
		if strings.Contains(s, "wJalrXUtnFEMIEXAMPLEKEY") || strings.Contains(s, "AKIDEXAMPLE") {
			t.Errorf("a credential was printed: %s", s)
		}
	}
	t.Setenv("AWS_REGION", "")
	if _, errOut, code := run(t, "conflicts", "--source", "cloudwatch:/aws/eks/demo/cluster"); code != 2 || !strings.Contains(errOut, "no AWS region") {
		t.Errorf("no region: exit %d, stderr %q; want 2 saying so", code, errOut)
	}
}

// sourceWant sets a kubeconfig naming a Kubernetes cluster (which a log
// service's error must not name) and returns the scene's writes (what a
// filter pushed down keeps) and their report read from a file.
func sourceWant(t *testing.T, lines []string) (writes []string, report string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(l, `"verb":"get"`) {
			writes = append(writes, l)
		}
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://k8s.example:6443\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	log := filepath.Join(dir, "writes.log")
	if err := os.WriteFile(log, []byte(strings.Join(writes, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report, _, code := run(t, "conflicts", "--audit-log", log, "--view", "writers", "-o", "json")
	if code != 0 || !strings.Contains(report, `"conflicts":`) {
		t.Fatalf("--audit-log: exit %d: %s", code, report)
	}
	return writes, report
}

// sceneFields are the fields of a scene's line a service's filter names.
func sceneFields(line string) map[string]string {
	var e struct{ Verb, Stage, RequestReceivedTimestamp string }
	_ = json.Unmarshal([]byte(line), &e)
	return map[string]string{"verb": e.Verb, "stage": e.Stage, "requestReceivedTimestamp": e.RequestReceivedTimestamp}
}

// TestConflictsSourceOpenSearch: --source opensearch:URL/INDEX, with
// credentials from the environment, against a local server that speaks
// OpenSearch's point-in-time API and refuses what OpenSearch refuses,
// gives the report of the log's writes; an absent index is exit 3 naming
// it (not the Kubernetes cluster), a URL with a password exit 2; no
// credential is printed.
func TestConflictsSourceOpenSearch(t *testing.T) {
	lines := sourceScene()
	srv := &osfake.Server{Index: "k8s-audit", N: len(lines), User: "reader", Password: "0s-pa55word", Doc: func(i int) osfake.Doc {
		return osfake.Doc{Fields: sceneFields(lines[i]), Source: lines[i]}
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	writes, want := sourceWant(t, lines)
	t.Setenv("OPENSEARCH_USERNAME", "reader")
	t.Setenv("OPENSEARCH_PASSWORD", "0s-pa55word")
	got, errOut, code := run(t, "conflicts", "--source", "opensearch:"+ts.URL+"/k8s-audit", "--view", "writers", "-o", "json")
	if code != 0 {
		t.Fatalf("--source: exit %d: %s", code, errOut)
	}
	if a, b := withoutInput(t, want), withoutInput(t, got); a != b {
		t.Errorf("--source gives another report than the log's writes:\nlog:    %s\nsource: %s", a, b)
	}
	if c := srv.Counts(); c.Sent != len(writes) || c.Opened != 1 || c.Closed != 1 || len(c.Refused) != 0 {
		t.Errorf("the server sent %d events (want the %d writes), opened %d and deleted %d points in time, refused %q", c.Sent, len(writes), c.Opened, c.Closed, c.Refused)
	}
	out, errOut, code := run(t, "conflicts", "--source", "opensearch:"+ts.URL+"/absent")
	if code != 3 || !strings.Contains(errOut, "opensearch:"+ts.URL+"/absent") || !strings.Contains(errOut, "index_not_found_exception") || strings.Contains(errOut, "cluster at") {
		t.Errorf("an absent index: exit %d, stderr %q; want 3 naming it, not the Kubernetes cluster", code, errOut)
	}
	_, badOut, badCode := run(t, "conflicts", "--source", "opensearch:https://reader:0s-pa55word@logs.example/k8s-audit")
	if badCode != 2 || !strings.Contains(badOut, "--source") || !strings.Contains(badOut, "OPENSEARCH_PASSWORD") {
		t.Errorf("a URL with a password: exit %d, stderr %q; want 2 saying where credentials go", badCode, badOut)
	}
	for _, s := range []string{got, errOut, out, badOut} {
		if strings.Contains(s, "0s-pa55word") {
			t.Errorf("a credential was printed: %s", s)
		}
	}
}

// TestConflictsSourceClickHouse: --source clickhouse:DSN/TABLE, with
// credentials from the environment, against a local server that speaks
// ClickHouse's HTTP interface in the Native format and refuses what
// ClickHouse refuses, gives the report of the log's writes; an absent
// table is exit 3 naming it, a DSN with a password exit 2; no credential
// is printed.
func TestConflictsSourceClickHouse(t *testing.T) {
	lines := sourceScene()
	srv := &chfake.Server{Database: "logs", Table: "k8s_audit", N: len(lines), BlockRows: 16, User: "reader", Password: "ch-pa55word",
		Row: func(i int) (map[string]string, string) { return sceneFields(lines[i]), lines[i] }}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	writes, want := sourceWant(t, lines)
	t.Setenv("CLICKHOUSE_USER", "reader")
	t.Setenv("CLICKHOUSE_PASSWORD", "ch-pa55word")
	got, errOut, code := run(t, "conflicts", "--source", "clickhouse:"+ts.URL+"/logs/k8s_audit", "--view", "writers", "-o", "json")
	if code != 0 {
		t.Fatalf("--source: exit %d: %s", code, errOut)
	}
	if a, b := withoutInput(t, want), withoutInput(t, got); a != b {
		t.Errorf("--source gives another report than the log's writes:\nlog:    %s\nsource: %s", a, b)
	}
	if c := srv.Counts(); c.Sent != len(writes) || len(c.Queries) != 1 || c.Blocks < len(writes)/16 || len(c.Refused) != 0 {
		t.Errorf("the server sent %d rows (want the %d writes) in %d blocks for %d queries, refused %q", c.Sent, len(writes), c.Blocks, len(c.Queries), c.Refused)
	}
	out, errOut, code := run(t, "conflicts", "--source", "clickhouse:"+ts.URL+"/logs/absent")
	if code != 3 || !strings.Contains(errOut, "clickhouse:"+ts.URL+"/logs/absent") || !strings.Contains(errOut, "UNKNOWN_TABLE") || strings.Contains(errOut, "cluster at") {
		t.Errorf("an absent table: exit %d, stderr %q; want 3 naming it, not the Kubernetes cluster", code, errOut)
	}
	_, badOut, badCode := run(t, "conflicts", "--source", "clickhouse:"+ts.URL+"/logs/k8s_audit?password=ch-pa55word")
	if badCode != 2 || !strings.Contains(badOut, "--source") || !strings.Contains(badOut, "CLICKHOUSE_PASSWORD") {
		t.Errorf("a DSN with a password: exit %d, stderr %q; want 2 saying where credentials go", badCode, badOut)
	}
	for _, s := range []string{got, errOut, out, badOut} {
		if strings.Contains(s, "ch-pa55word") {
			t.Errorf("a credential was printed: %s", s)
		}
	}
}

// withoutInput is a report's JSON without its input and scope sections
// (which name the files).
func withoutInput(t *testing.T, report string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(report), &m); err != nil {
		t.Fatalf("%v: %s", err, report)
	}
	delete(m, "input")
	delete(m, "scope")
	b, _ := json.Marshal(m)
	return string(b)
}

func TestConflictsValidateSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*ConflictsOptions)
		want string
	}{
		{"not a source", func(o *ConflictsOptions) { o.Sources = []string{"s3://bucket"} }, `--source "s3://bucket": give cloudwatch:LOG_GROUP`},
		{"no group", func(o *ConflictsOptions) { o.Sources = []string{"cloudwatch:"} }, `give cloudwatch:LOG_GROUP`},
		{"with listen", func(o *ConflictsOptions) {
			o.AuditLogs, o.Listen, o.Sources = nil, "127.0.0.1:0", []string{"cloudwatch:g"}
		}, "--source or --listen"},
		{"with scenario", func(o *ConflictsOptions) { o.Scenario, o.Sources = "x.yaml", []string{"cloudwatch:g"} }, "--scenario reads the log a second time"},
		{"zero --source-timeout", func(o *ConflictsOptions) { o.Sources, o.SourceTimeout = []string{"cloudwatch:g"}, 0 }, "--source-timeout must be positive"},
		{"--source-page-size too large", func(o *ConflictsOptions) { o.Sources, o.SourcePageSize = []string{"cloudwatch:g"}, 10001 }, "--source-page-size must be 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _ := newConflictsOptions("audit.log")
			tc.set(o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConflictsSourceCompletion(t *testing.T) {
	out, _, code := run(t, "__complete", "conflicts", "--source", "")
	if code != 0 || !strings.Contains(out, "cloudwatch:/aws/eks/\n") || !strings.Contains(out, ":6\n") {
		t.Errorf("exit %d, completions %q: want cloudwatch:/aws/eks/ without a space or files (directive 6)", code, out)
	}
}

// TestConflictsWriterCompletion: --writer completes to the users and
// field managers of the log's writes (not of its reads or dry runs).
func TestConflictsWriterCompletion(t *testing.T) {
	line := func(verb, user, uri, ua string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + verb + user + `","stage":"ResponseComplete","requestURI":"` + uri +
			`","verb":"` + verb + `","user":{"username":"` + user + `"},"userAgent":"` + ua + `","objectRef":{"resource":"configmaps","namespace":"ns","name":"c"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-24T10:00:00Z","stageTimestamp":"2026-11-24T10:00:00.1Z"}` + "\n"
	}
	log := filepath.Join(t.TempDir(), "audit.log")
	body := line("update", "alice", "/api/v1/namespaces/ns/configmaps/c?fieldManager=gitops", "argocd/v2") +
		line("patch", "system:serviceaccount:ns:ctl", "/api/v1/namespaces/ns/configmaps/c", "manager/v0.0.0 (linux/amd64)") +
		line("get", "reader-only", "/api/v1/namespaces/ns/configmaps/c", "curl/8") +
		line("update", "dry-runner", "/api/v1/namespaces/ns/configmaps/c?dryRun=All", "kubectl/v1")
	if err := os.WriteFile(log, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, "__complete", "conflicts", "--audit-log", log, "--writer", "")
	want := "alice\ngitops\nmanager\nsystem:serviceaccount:ns:ctl\n:4\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d, completions %q: want %q", code, out, want)
	}
	if out, _, _ := run(t, "__complete", "conflicts", "--audit-log", log, "--writer", "sys"); !strings.HasPrefix(out, "system:serviceaccount:ns:ctl\n:4\n") {
		t.Errorf("completions of sys: %q", out)
	}
}

// run executes kubectl rv ARGS in process, with conflicts the only command.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cmdtest.Run(t, []cmdtest.NewCmd{NewCmdConflicts}, args...)
}
