package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a running local control plane.
type Cluster struct {
	// Root is the repository root.
	Root string
	// Dir holds the cluster's state (kubeconfig, logs, pids, data).
	Dir string
	// Kubeconfig has the contexts rv-admin (current), rv-readonly and rv-nobody.
	Kubeconfig string
	// EtcdEndpoint is etcd's client URL, for tests that compact or read etcd.
	EtcdEndpoint string
	// APIServer is the API server's URL.
	APIServer string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and kubectl.
	BinDir string
	// AuditLog is the API server's audit log (JSON lines of audit.k8s.io/v1
	// Event; Metadata level, RequestResponse in the namespace rv-audit-rr).
	AuditLog string
	// RVBin is the kubectl-rv binary under test.
	RVBin string
	// APIServer2 is the second API server's URL on a plane started with
	// two (StartPlane), else "".
	APIServer2 string
	// Storage is "etcd" or "kine".
	Storage string

	env []string
	tmp string
}

// Start builds kubectl-rv and the control plane (reusing cached binaries) and
// starts the control plane in a fresh temporary folder.
func Start() (*Cluster, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kubectl-rv-e2e-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Root: root, tmp: tmp, Dir: filepath.Join(tmp, "cluster")}
	rvDir := filepath.Join(tmp, "bin")
	c.RVBin = filepath.Join(rvDir, "kubectl-rv")
	if err := os.MkdirAll(rvDir, 0o755); err != nil {
		return nil, err
	}
	// The build uses the CPU while the control plane starts up, which
	// mostly waits: the two run at the same time.
	build := GoBuild(root, c.RVBin, "./cmd/kubectl-rv")
	built := make(chan error, 1)
	go func() {
		if out, err := build.CombinedOutput(); err != nil {
			built <- fmt.Errorf("building kubectl-rv: %v\n%s", err, out)
			return
		}
		built <- nil
	}()
	// Completion through kubectl runs kubectl_complete-rv from PATH.
	if src := filepath.Join(root, "hack", "kubectl_complete-rv"); fileExists(src) {
		if err := copyExecutable(src, filepath.Join(rvDir, "kubectl_complete-rv")); err != nil {
			return nil, err
		}
	}

	closeInheritedOnExec()
	up := exec.Command(filepath.Join(root, "hack", "local-cluster.sh"), "up")
	up.Dir = root
	up.Env = append(os.Environ(), "RV_CLUSTER_DIR="+c.Dir)
	var stderr bytes.Buffer
	up.Stderr = &stderr
	out, err := up.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/local-cluster.sh up: %v\n%s", err, stderr.String())
	}
	if err := <-built; err != nil {
		_ = c.Stop()
		return nil, err
	}
	vars := parseExports(out)
	c.Kubeconfig, c.EtcdEndpoint, c.APIServer, c.BinDir = vars["KUBECONFIG"], vars["RV_ETCD_ENDPOINT"], vars["RV_APISERVER"], vars["RV_CONTROL_PLANE_BIN"]
	c.AuditLog, c.Storage = vars["RV_AUDIT_LOG"], vars["RV_STORAGE"]
	if c.Kubeconfig == "" || c.APIServer == "" || c.BinDir == "" {
		_ = c.Stop()
		return nil, fmt.Errorf("hack/local-cluster.sh up printed no KUBECONFIG/RV_APISERVER:\n%s\n%s", out, stderr.String())
	}
	c.env = append(filterEnv(os.Environ(), "KUBECONFIG", "PATH", "NO_COLOR"),
		"KUBECONFIG="+c.Kubeconfig,
		"PATH="+rvDir+string(os.PathListSeparator)+c.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RV_CLUSTER_DIR="+c.Dir,
	)
	return c, nil
}

// Stop stops the control plane and removes its data.
func (c *Cluster) Stop() error {
	down := exec.Command(filepath.Join(c.Root, "hack", "local-cluster.sh"), "down")
	down.Env = append(os.Environ(), "RV_CLUSTER_DIR="+c.Dir)
	out, err := down.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hack/local-cluster.sh down: %v\n%s", err, out)
	}
	return os.RemoveAll(c.tmp)
}

// Describe says what the tests run against, for the log.
func (c *Cluster) Describe() string {
	out, _ := exec.Command(filepath.Join(c.BinDir, "kube-apiserver"), "--version").Output()
	return fmt.Sprintf("%s at %s (etcd %s)", strings.TrimSpace(string(out)), c.APIServer, c.EtcdEndpoint)
}

// Result is what a command did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// RV runs kubectl rv ARGS through kubectl's plugin mechanism.
func (c *Cluster) RV(t testing.TB, args ...string) Result {
	t.Helper()
	return c.Run(t, nil, "kubectl", append([]string{"rv"}, args...)...)
}

// Kubectl runs kubectl ARGS against the cluster (as rv-admin unless --context says otherwise).
func (c *Cluster) Kubectl(t testing.TB, args ...string) Result {
	t.Helper()
	return c.Run(t, nil, "kubectl", args...)
}

// MustKubectl runs kubectl and fails the test unless it exits 0.
func (c *Cluster) MustKubectl(t testing.TB, args ...string) string {
	t.Helper()
	r := c.Kubectl(t, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// KubectlStdin runs kubectl with stdin, failing the test unless it exits 0.
func (c *Cluster) KubectlStdin(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	r := c.Run(t, strings.NewReader(stdin), "kubectl", args...)
	if r.Code != 0 {
		t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
	}
	return r.Stdout
}

// Run runs a program with the cluster's environment (PATH, KUBECONFIG).
func (c *Cluster) Run(t testing.TB, stdin *strings.Reader, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	cmd.Dir = c.Root
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %s %s: %v", name, strings.Join(args, " "), err)
	}
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// Command returns an unstarted command with the cluster's environment, for
// tests that run something in the background (kubectl rv watch).
func (c *Cluster) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	cmd.Dir = c.Root
	return cmd
}

// Env returns the environment commands run with.
func (c *Cluster) Env() []string { return append([]string(nil), c.env...) }

// Hack runs hack/local-cluster.sh VERB against this cluster. A restart
// holds the loopback ports (HoldPorts): its API server binds its port
// again.
func (c *Cluster) Hack(t testing.TB, verb string) {
	t.Helper()
	if strings.HasPrefix(verb, "restart") {
		defer HoldPorts()()
	}
	cmd := exec.Command(filepath.Join(c.Root, "hack", "local-cluster.sh"), verb)
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/local-cluster.sh %s: %v\n%s", verb, err, out)
	}
}

// RestartAPIServer stops and starts kube-apiserver; it returns once ready.
func (c *Cluster) RestartAPIServer(t testing.TB) { t.Helper(); c.Hack(t, "restart-apiserver") }

// PauseControllers stops kube-controller-manager with SIGSTOP, so that
// objects' observedGeneration falls behind on purpose. Tests must resume it
// (the cleanup does, in case a test fails first).
func (c *Cluster) PauseControllers(t testing.TB) {
	t.Helper()
	c.Hack(t, "pause-controllers")
	t.Cleanup(func() { c.ResumeControllers(t) })
}

// ResumeControllers sends SIGCONT to kube-controller-manager.
func (c *Cluster) ResumeControllers(t testing.TB) { t.Helper(); c.Hack(t, "resume-controllers") }

// RESTConfig returns a client configuration for a kubeconfig context
// (rv-admin, rv-readonly, rv-nobody) with the given user agent, which the
// API server turns into the field manager of non-apply writes.
func (c *Cluster) RESTConfig(t testing.TB, context, userAgent string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		t.Fatalf("kubeconfig %s context %s: %v", c.Kubeconfig, context, err)
	}
	cfg.UserAgent = userAgent
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// Dynamic returns an admin dynamic client writing as userAgent.
func (c *Cluster) Dynamic(t testing.TB, userAgent string) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(c.RESTConfig(t, "rv-admin", userAgent))
}

// Clientset returns an admin clientset writing as userAgent.
func (c *Cluster) Clientset(t testing.TB, userAgent string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(c.RESTConfig(t, "rv-admin", userAgent))
}

var nsCounter atomic.Int64

// Namespace creates a namespace for one test and deletes it afterwards.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%s-%d", sanitize(t.Name()), nsCounter.Add(1))
	if len(name) > 63 {
		name = fmt.Sprintf("e2e-%d-%s", nsCounter.Add(1), sanitize(t.Name()))[:63]
		name = strings.TrimRight(name, "-")
	}
	cs := c.Clientset(t, "e2e-setup")
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, newNamespace(name), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(data, []byte("module github.com/kubectl-rv/kubectl-rv\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/kubectl-rv/kubectl-rv) not found")
		}
		dir = parent
	}
}

func parseExports(out []byte) map[string]string {
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	return vars
}

func filterEnv(env []string, drop ...string) []string {
	var out []string
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		keep := true
		for _, d := range drop {
			if k == d {
				keep = false
			}
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func copyExecutable(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}

// GoBuild is the go build of pkg into out, run in the module root, with
// the release build's flags (hack/release.sh: CGO_ENABLED=0, -trimpath).
// The same flags give the same compiled packages, so the suite's builds,
// the release test's build for this platform and make's e2e test binary
// (built with them too) compile each package once between them and
// share Go's build cache.
func GoBuild(root, out, pkg string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
