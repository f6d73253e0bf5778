package framework

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// PlaneOptions say what an extra control plane is made of: the variables
// of hack/local-cluster.sh that build what real clusters have and a fresh
// test cluster does not.
type PlaneOptions struct {
	// Storage is "etcd" (the default) or "kine" (k3s's etcd shim over SQLite).
	Storage string
	// APIServers is 1 (the default) or 2: a second kube-apiserver over the
	// same storage on 127.0.0.2, same port.
	APIServers int
	// CompactionInterval is the API servers' --etcd-compaction-interval; 0
	// keeps hack/local-cluster.sh's 5 minutes.
	CompactionInterval time.Duration
	// Controllers starts kube-controller-manager.
	Controllers bool
	// LeaderElect starts kube-controller-manager with --leader-elect=true:
	// it holds and renews the Lease kube-system/kube-controller-manager.
	LeaderElect bool
	// AuditWebhook, when set, is the URL the API servers also send their
	// audit events to (the webhook backend, flushed every second).
	AuditWebhook string
	// AuditWebhookKubeconfig, when set, is the kubeconfig the webhook
	// backend reads instead (--audit-webhook-config-file): the receiver's
	// URL with its credentials, as kubectl rv conflicts
	// --webhook-kubeconfig writes it.
	AuditWebhookKubeconfig string
}

var planeCounter atomic.Int64

// portsMu is held while a loopback port in 20000-31999 is chosen and until
// it is bound: hack/local-cluster.sh and the tests' own etcds pick ports
// there at random, check that they are free, and bind them later, so two
// starts at once (parallel tests, the planes TestMain starts in the
// background) could pick the same port.
var portsMu sync.Mutex

// HoldPorts takes the loopback ports for a start that picks and binds its
// ports; the returned func gives them back.
func HoldPorts() (release func()) {
	portsMu.Lock()
	return portsMu.Unlock
}

// StartPlane starts another control plane beside c, in a folder of its own
// under c's temporary folder, run by the same kubectl-rv and control-plane
// binaries. The caller stops it.
func (c *Cluster) StartPlane(opts PlaneOptions) (*Cluster, error) {
	p := &Cluster{Root: c.Root, RVBin: c.RVBin, tmp: "", Dir: filepath.Join(c.tmp, fmt.Sprintf("plane-%d", planeCounter.Add(1)))}
	env := append(os.Environ(), "RV_CLUSTER_DIR="+p.Dir,
		"RV_STORAGE="+orDefault(opts.Storage, "etcd"),
		fmt.Sprintf("RV_APISERVERS=%d", max(opts.APIServers, 1)),
		"RV_CONTROLLERS="+map[bool]string{true: "1", false: "0"}[opts.Controllers])
	if opts.LeaderElect {
		env = append(env, "RV_KCM_LEADER_ELECT=true")
	}
	if opts.AuditWebhook != "" {
		env = append(env, "RV_AUDIT_WEBHOOK="+opts.AuditWebhook)
	}
	if opts.AuditWebhookKubeconfig != "" {
		env = append(env, "RV_AUDIT_WEBHOOK_KUBECONFIG="+opts.AuditWebhookKubeconfig)
	}
	if opts.CompactionInterval > 0 {
		env = append(env, "RV_COMPACTION_INTERVAL="+opts.CompactionInterval.String())
	}
	defer HoldPorts()()
	up := exec.Command(filepath.Join(c.Root, "hack", "local-cluster.sh"), "up")
	up.Dir, up.Env = c.Root, env
	var stderr bytes.Buffer
	up.Stderr = &stderr
	out, err := up.Output()
	if err != nil {
		_ = p.stopPlane()
		return nil, fmt.Errorf("hack/local-cluster.sh up (%+v): %v\n%s", opts, err, stderr.String())
	}
	vars := parseExports(out)
	p.Kubeconfig, p.EtcdEndpoint, p.APIServer, p.BinDir = vars["KUBECONFIG"], vars["RV_ETCD_ENDPOINT"], vars["RV_APISERVER"], vars["RV_CONTROL_PLANE_BIN"]
	p.APIServer2, p.AuditLog, p.Storage = vars["RV_APISERVER2"], vars["RV_AUDIT_LOG"], vars["RV_STORAGE"]
	if p.Kubeconfig == "" || p.APIServer == "" {
		_ = p.stopPlane()
		return nil, fmt.Errorf("hack/local-cluster.sh up printed no KUBECONFIG/RV_APISERVER:\n%s\n%s", out, stderr.String())
	}
	rvDir := filepath.Dir(c.RVBin)
	p.env = append(filterEnv(os.Environ(), "KUBECONFIG", "PATH", "NO_COLOR"),
		"KUBECONFIG="+p.Kubeconfig,
		"PATH="+rvDir+string(os.PathListSeparator)+p.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"RV_CLUSTER_DIR="+p.Dir,
	)
	return p, nil
}

// StopPlane stops a plane that StartPlane started.
func (c *Cluster) StopPlane() error { return c.stopPlane() }

func (c *Cluster) stopPlane() error {
	down := exec.Command(filepath.Join(c.Root, "hack", "local-cluster.sh"), "down")
	down.Env = append(os.Environ(), "RV_CLUSTER_DIR="+c.Dir)
	if out, err := down.CombinedOutput(); err != nil {
		return fmt.Errorf("hack/local-cluster.sh down: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
