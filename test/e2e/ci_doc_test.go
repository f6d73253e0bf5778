//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ciSkippedActions are the only `uses:` steps of docs/ci.md's GitHub
// Actions jobs that TestCIDocPipelines does not run, each with what stands
// in for it; any other action fails the test, so that no step is left out
// unnoticed.
var ciSkippedActions = map[string]string{
	"actions/checkout": "the workspace holds the repository's deploy/ already",
	"github/codeql-action/upload-sarif": "checkUploadSARIF: the file its sarif_file names validates against the SARIF 2.1.0 schema " +
		"(and with Microsoft's SARIF multitool where it is installed), as code scanning requires",
}

// ciNamespace is the namespace docs/ci.md's pipelines deploy to.
const ciNamespace = "shop"

// ciDeploy is the repository's deploy/ folder the pipelines apply: a
// Deployment, its Service and a ConfigMap, without a namespace (the
// pipelines pass -n).
const ciDeploy = `apiVersion: v1
kind: ConfigMap
metadata: {name: web-settings}
data: {greeting: hello}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/web:1.0}]
`

// TestCIDocPipelines runs every pipeline of docs/ci.md, as the page
// writes it, from the release hack/release.sh built (releaseBuild),
// downloaded by the page's own install commands. A code block of the page
// is marked by the HTML comment before its fence (ciMarker): the
// pipelines it belongs to, run in the page's order, or why it is not run.
// Each pipeline runs in a workspace of its own (the repository's deploy/,
// an empty HOME, an empty bin folder standing in for /usr/local/bin), with
// nothing on PATH but that folder, kubectl and the system's tools: the
// page's install step must bring what its commands need. The pipelines
// share the cluster, as a real one would be, in the order of the page.
func TestCIDocPipelines(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(cluster.Root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	pipelines, err := ciPipelines(string(doc))
	if err != nil {
		t.Fatalf("docs/ci.md: %v", err)
	}
	if len(pipelines) == 0 {
		t.Fatal("docs/ci.md marks no pipeline")
	}
	for name := range ciOutcomes {
		if !slices.ContainsFunc(pipelines, func(p ciPipeline) bool { return p.name == name }) {
			t.Errorf("docs/ci.md has no pipeline %s, whose findings the test checks", name)
		}
	}
	b := startRelease()
	<-b.done
	if b.err != nil {
		t.Fatalf("hack/release.sh %s: %v\n%s", releaseVersion, b.err, b.out)
	}
	dl := serveReleases(t, b.dist)
	cluster.MustKubectl(t, "delete", "namespace", ciNamespace, "--ignore-not-found", "--timeout=2m")
	cluster.MustKubectl(t, "create", "namespace", ciNamespace)
	t.Cleanup(func() { cluster.Kubectl(t, "delete", "namespace", ciNamespace, "--wait=false") })
	standInKubelet(t, ciNamespace)
	for _, p := range pipelines {
		if !t.Run(p.name, func(t *testing.T) { runCIPipeline(t, dl, p) }) {
			// The later pipelines build on the cluster this one leaves.
			return
		}
	}
	archive := fmt.Sprintf("_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	if !slices.ContainsFunc(dl.got, func(f string) bool { return strings.HasSuffix(f, archive) }) {
		t.Errorf("no pipeline downloaded the release archive *%s; downloaded: %q", archive, dl.got)
	}
}

// ciBlock is one marked code block of the page.
type ciBlock struct {
	line int
	lang string
	body string
	// noCluster runs the block without cluster access.
	noCluster bool
	// gitlab reads a yaml block as a .gitlab-ci.yml, not as a GitHub
	// Actions workflow.
	gitlab bool
}

// ciPipeline is one pipeline: its blocks in the page's order.
type ciPipeline struct {
	name   string
	blocks []ciBlock
}

// ciMarker is the comment that marks the code block after it:
// `<!-- ci-test: NAME[,NAME...] [no-cluster] [gitlab-ci] -->` runs the
// block in the named pipelines (no-cluster: with a kubeconfig whose server
// does not answer; gitlab-ci: a yaml block is a .gitlab-ci.yml), `<!--
// ci-test: not run: REASON -->` says why it is not run.
var ciMarker = regexp.MustCompile(`^<!-- ci-test: (.*) -->$`)

// ciPipelines reads the pipelines from the page's marked code blocks; a
// code block without a marker is an error, so that a new one is run or
// says why not.
func ciPipelines(doc string) ([]ciPipeline, error) {
	var (
		out    []ciPipeline
		marker string
		block  *ciBlock
		names  []string
	)
	for i, l := range strings.Split(doc, "\n") {
		switch {
		case block != nil && strings.TrimSpace(l) == "```":
			for _, n := range names {
				j := slices.IndexFunc(out, func(p ciPipeline) bool { return p.name == n })
				if j < 0 {
					out, j = append(out, ciPipeline{name: n}), len(out)
				}
				out[j].blocks = append(out[j].blocks, *block)
			}
			block, names = nil, nil
		case block != nil:
			block.body += l + "\n"
		case strings.HasPrefix(l, "```"):
			if marker == "" {
				return nil, fmt.Errorf("line %d: a code block without a <!-- ci-test: ... --> comment before it: name its pipelines, or say why it is not run", i+1)
			}
			block = &ciBlock{line: i + 1, lang: strings.TrimPrefix(l, "```")}
			if !strings.HasPrefix(marker, "not run: ") {
				f := strings.Fields(marker)
				names = strings.Split(f[0], ",")
				block.noCluster = slices.Contains(f[1:], "no-cluster")
				block.gitlab = slices.Contains(f[1:], "gitlab-ci")
			}
			marker = ""
		case ciMarker.MatchString(l):
			marker = ciMarker.FindStringSubmatch(l)[1]
		case strings.TrimSpace(l) != "":
			marker = ""
		}
	}
	if block != nil {
		return nil, fmt.Errorf("line %d: the code block is not closed", block.line)
	}
	return out, nil
}

// ciWorkspace is one pipeline's machine.
type ciWorkspace struct {
	dir string
	// sysBin stands in for /usr/local/bin.
	sysBin string
	env    []string
	// offline is env with a kubeconfig whose server does not answer.
	offline []string
	// outcome is what the pipeline must find, or nil: every step passes.
	outcome *ciOutcome
	// failed are the jobs that failed as the outcome expects.
	failed map[string]bool
	// checked counts the reports checked.
	checked int
}

func newCIWorkspace(t *testing.T, dl *releaseServer) *ciWorkspace {
	w := &ciWorkspace{dir: t.TempDir(), failed: map[string]bool{}}
	w.sysBin = filepath.Join(w.dir, "usr-local-bin")
	home, tools := filepath.Join(w.dir, "home"), filepath.Join(w.dir, "tools")
	for _, d := range []string{w.sysBin, home, tools, filepath.Join(w.dir, "repo", "deploy")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		// curl reads ~/.curlrc: github.com is the test's server.
		filepath.Join(home, ".curlrc"):                     dl.curlrc,
		filepath.Join(w.dir, "repo", "deploy", "web.yaml"): ciDeploy,
		// GitHub's runners run sudo without a password.
		filepath.Join(tools, "sudo"): "#!/bin/sh\nexec \"$@\"\n",
		filepath.Join(w.dir, "offline.kubeconfig"): "apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
			"users: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(cluster.BinDir, "kubectl"), filepath.Join(tools, "kubectl")); err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{w.sysBin, tools, "/usr/bin", "/bin"}, string(os.PathListSeparator))
	w.env = []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8"}
	w.offline = append(slices.Clone(w.env), "KUBECONFIG="+filepath.Join(w.dir, "offline.kubeconfig"))
	for _, e := range cluster.Env() {
		if strings.HasPrefix(e, "KUBECONFIG=") {
			w.env = append(w.env, e)
		}
	}
	if got := lookPath(path, "kubectl-rv"); got != "" {
		t.Fatalf("kubectl-rv is on PATH before the pipeline installs it: %s", got)
	}
	return w
}

// lookPath returns the first file name in the folders of path, or "".
func lookPath(path, name string) string {
	for _, d := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && !fi.IsDir() {
			return filepath.Join(d, name)
		}
	}
	return ""
}

func runCIPipeline(t *testing.T, dl *releaseServer, p ciPipeline) {
	w := newCIWorkspace(t, dl)
	out, hasOutcome := ciOutcomes[p.name]
	if hasOutcome {
		out.scene(t)
		w.outcome = &out
	}
	for _, b := range p.blocks {
		switch {
		case b.lang == "sh":
			env := w.env
			if b.noCluster {
				env = w.offline
			}
			w.run(t, fmt.Sprintf("docs/ci.md:%d", b.line), b.body, env, "bash", "--noprofile", "--norc", "-eo", "pipefail")
		case b.lang == "yaml" && b.gitlab:
			w.runGitLab(t, b)
		case b.lang == "yaml":
			w.runWorkflow(t, b)
		default:
			t.Fatalf("docs/ci.md:%d: a pipeline's block in %q: the test runs sh and GitHub Actions yaml", b.line, b.lang)
		}
	}
	kubectl := filepath.Join(cluster.BinDir, "kubectl")
	if got := lookPath(envPath(w.env), "kubectl"); got != filepath.Join(w.dir, "tools", "kubectl") {
		t.Errorf("kubectl on the pipeline's PATH is %s, want %s", got, kubectl)
	}
	if got, want := lookPath(envPath(w.env), "kubectl-rv"), filepath.Join(w.sysBin, "kubectl-rv"); got != want {
		t.Errorf("the pipeline's kubectl-rv is %q, want the one its install step put in %s", got, want)
	}
	if hasOutcome {
		for job, step := range out.fails {
			if !w.failed[job] {
				t.Errorf("job %s: %q did not fail: the finding the pipeline is shown for was not found", job, step)
			}
		}
		if w.checked < out.checks {
			t.Errorf("%d of the %d reports the pipeline writes were checked", w.checked, out.checks)
		}
	}
}

func envPath(env []string) string {
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			return p
		}
	}
	return ""
}

// run runs script with the shell, in the workspace's repository, its
// /usr/local/bin the workspace's, and returns its stderr; it fails the
// test when the script fails.
func (w *ciWorkspace) run(t *testing.T, where, script string, env []string, shell ...string) string {
	t.Helper()
	_, stderr, err := w.exec(t, where, script, env, shell...)
	if err != nil {
		t.Fatalf("%s failed: %v\n%s", where, err, stderr)
	}
	return stderr
}

// exec runs script as run does and returns its output and error.
func (w *ciWorkspace) exec(t *testing.T, where, script string, env []string, shell ...string) (stdout, stderr string, err error) {
	t.Helper()
	script = strings.ReplaceAll(script, "/usr/local/bin", w.sysBin)
	f := filepath.Join(w.dir, "step.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shell[0], append(shell[1:], f)...)
	cmd.Dir, cmd.Env = filepath.Join(w.dir, "repo"), env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	t.Logf("%s (%s):\n%s\nstdout:\n%s\nstderr:\n%s", where, time.Since(start).Round(time.Millisecond), script, out.String(), errOut.String())
	return out.String(), errOut.String(), err
}

// ciWorkflow is what the test reads of a GitHub Actions workflow.
type ciWorkflow struct {
	Jobs map[string]struct {
		Env   map[string]string `json:"env"`
		Steps []ciStep          `json:"steps"`
	} `json:"jobs"`
}

type ciStep struct {
	Name  string            `json:"name"`
	Uses  string            `json:"uses"`
	Run   string            `json:"run"`
	If    string            `json:"if"`
	Env   map[string]string `json:"env"`
	Shell string            `json:"shell"`
	With  map[string]string `json:"with"`
}

// runWorkflow runs each job's steps in order, as a GitHub runner does:
// each run: script with the job's and the step's env, in bash -e (bash
// --noprofile --norc -eo pipefail with shell: bash). A step may fail only
// where the pipeline's outcome says (exit 1, on the finding it is shown
// for); after it, as on a runner, only the if: always() and if: failure()
// steps run. In a job that passes, the steps that run only if: failure()
// run last, so that the evidence they keep is known to be kept: they must
// not fail, nor write to stderr (their commands' errors are ignored with
// || true).
func (w *ciWorkspace) runWorkflow(t *testing.T, b ciBlock) {
	var wf ciWorkflow
	if err := yaml.Unmarshal([]byte(b.body), &wf); err != nil {
		t.Fatalf("docs/ci.md:%d: %v", b.line, err)
	}
	if len(wf.Jobs) == 0 {
		t.Fatalf("docs/ci.md:%d: a GitHub Actions block without jobs", b.line)
	}
	for _, name := range slices.Sorted(maps.Keys(wf.Jobs)) {
		job := wf.Jobs[name]
		var onFailure []ciStep
		failed := false
		for i, s := range job.Steps {
			where := fmt.Sprintf("docs/ci.md:%d job %s step %d (%s)", b.line, name, i+1, s.Name)
			switch s.If {
			case "", "success()":
				if failed {
					t.Logf("%s: skipped after the failed step, as a runner does", where)
					continue
				}
			case "always()":
			case "failure()":
				if !failed {
					onFailure = append(onFailure, s)
					continue
				}
			default:
				t.Fatalf("%s: if: %s is not one the test knows (success(), failure(), always())", where, s.If)
			}
			if s.Uses != "" {
				w.useAction(t, where, s)
				continue
			}
			if _, _, err := w.runStep(t, where, name, job.Env, s); err != nil {
				failed = true
			}
		}
		for _, s := range onFailure {
			where := fmt.Sprintf("docs/ci.md:%d job %s, the failure() step %q", b.line, name, s.Name)
			if _, stderr, _ := w.runStep(t, where, name, job.Env, s); stderr != "" {
				t.Errorf("%s wrote to stderr (its errors are ignored):\n%s", where, stderr)
			}
		}
	}
}

// useAction stands in for a uses: step (ciSkippedActions).
func (w *ciWorkspace) useAction(t *testing.T, where string, s ciStep) {
	t.Helper()
	action, _, _ := strings.Cut(s.Uses, "@")
	if _, ok := ciSkippedActions[action]; !ok {
		t.Fatalf("%s uses %s: the test runs run: steps and stands in only for %v", where, s.Uses, slices.Sorted(maps.Keys(ciSkippedActions)))
	}
	if action == "github/codeql-action/upload-sarif" {
		w.checkUploadSARIF(t, where, s.With["sarif_file"])
	}
}

// checkUploadSARIF checks the file upload-sarif uploads: it is there,
// validates against the SARIF 2.1.0 schema (and with the SARIF multitool
// where it is installed), and holds what the pipeline's outcome expects.
func (w *ciWorkspace) checkUploadSARIF(t *testing.T, where, file string) {
	t.Helper()
	if file == "" {
		t.Fatalf("%s: upload-sarif without sarif_file", where)
	}
	data, err := os.ReadFile(filepath.Join(w.dir, "repo", file))
	if err != nil {
		t.Fatalf("%s: upload-sarif's %s: %v", where, file, err)
	}
	validateSARIF(t, t.TempDir(), string(data))
	w.checkReport(t, where, file, string(data))
}

// checkReport checks a report file (SARIF, JUnit) the pipeline writes
// against its outcome.
func (w *ciWorkspace) checkReport(t *testing.T, where, file, data string) {
	t.Helper()
	if w.outcome == nil {
		return
	}
	check, ok := w.outcome.reports[file]
	if !ok {
		t.Fatalf("%s: the test has no check of the report %s", where, file)
	}
	check(t, w, data)
	w.checked++
}

// runStep runs a run: step of job; it fails the test unless the step
// passes or is the one the pipeline's outcome expects to exit 1. The
// standard output of a step that prints -o github is checked against the
// outcome.
func (w *ciWorkspace) runStep(t *testing.T, where, job string, jobEnv map[string]string, s ciStep) (stdout, stderr string, err error) {
	t.Helper()
	env := slices.Clone(w.env)
	for _, m := range []map[string]string{jobEnv, s.Env} {
		for k, v := range m {
			env = append(env, k+"="+v)
		}
	}
	shell := []string{"bash", "-e"}
	switch s.Shell {
	case "":
	case "bash":
		shell = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail"}
	default:
		t.Fatalf("%s: shell: %s is not one the test runs (bash)", where, s.Shell)
	}
	stdout, stderr, err = w.exec(t, where, s.Run, env, shell...)
	w.expectExit(t, where, job, s.Name, err, stderr)
	if strings.Contains(s.Run, "-o github") && w.outcome != nil && w.outcome.annotations != nil {
		w.outcome.annotations(t, stdout)
		w.checked++
	}
	return stdout, stderr, err
}

// expectExit fails the test unless err is nil, or an exit 1 of the step
// the pipeline's outcome expects to fail in job (then the job is marked
// failed).
func (w *ciWorkspace) expectExit(t *testing.T, where, job, step string, err error, stderr string) {
	t.Helper()
	if err == nil {
		return
	}
	var exit *exec.ExitError
	if w.outcome != nil && w.outcome.fails[job] == step && errors.As(err, &exit) && exit.ExitCode() == 1 {
		w.failed[job] = true
		return
	}
	t.Fatalf("%s failed: %v\n%s", where, err, stderr)
}

// releaseServer serves a release's files at GitHub's download URLs.
type releaseServer struct {
	// curlrc points curl's github.com at the server and trusts its CA.
	curlrc string
	mu     sync.Mutex
	// got are the files downloaded.
	got []string
}

// serveReleases serves the files of dist, built as releaseVersion, as
// https://github.com/kubectl-rv/kubectl-rv/releases/download/VERSION/FILE
// for any VERSION (the page's): the files' names, and the names the
// checksums file lists, say VERSION instead of releaseVersion.
func serveReleases(t *testing.T, dist string) *releaseServer {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "releases")
	certFile, keyFile := ca.issue(t, dir, "github", x509.ExtKeyUsageServerAuth, "github.com")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := &releaseServer{}
	prefix := "/kubectl-rv/kubectl-rv/releases/download/"
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		version, file, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, prefix), "/")
		if !ok || !strings.HasPrefix(r.URL.Path, prefix) || path.Base(file) != file {
			http.NotFound(rw, r)
			return
		}
		data, err := os.ReadFile(filepath.Join(dist, strings.ReplaceAll(file, version, releaseVersion)))
		if err != nil {
			http.NotFound(rw, r)
			return
		}
		if strings.HasSuffix(file, "_checksums.txt") {
			data = bytes.ReplaceAll(data, []byte(releaseVersion), []byte(version))
		}
		rs.mu.Lock()
		rs.got = append(rs.got, file)
		rs.mu.Unlock()
		rw.Write(data)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	rs.curlrc = fmt.Sprintf("connect-to = github.com:443:%s\ncacert = %s\n", strings.TrimPrefix(srv.URL, "https://"), ca.file)
	return rs
}

// standInKubelet does for ns's pods what a kubelet would, until the test
// ends: the plane has no node, so without it no Deployment ever rolls out
// and the page's rollout gate (lag --wait --for rollout) could only time
// out. Each pod of ns that is not Ready is marked Running and Ready
// through its status.
func standInKubelet(t *testing.T, ns string) {
	t.Helper()
	cs := cluster.Clientset(t, "e2e-kubelet")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range pods.Items {
					markReady(ctx, cs.CoreV1().Pods(ns), &pods.Items[i])
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
}

// markReady sets pod's phase Running and its Ready conditions True, as a
// kubelet reports a started container; errors are left to the next round.
func markReady(ctx context.Context, pods interface {
	UpdateStatus(context.Context, *corev1.Pod, metav1.UpdateOptions) (*corev1.Pod, error)
}, pod *corev1.Pod) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return
		}
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.Conditions = nil
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	_, _ = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: "e2e-kubelet"})
}
