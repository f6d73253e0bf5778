//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestVersionShowsClientAndServer(t *testing.T) {
	r := cluster.RV(t, "version")
	if r.Code != 0 {
		t.Fatalf("kubectl rv version: %s", r)
	}
	if !strings.Contains(r.Stdout, "Client Version: ") || !strings.Contains(r.Stdout, "Server Version: v1.36.") {
		t.Errorf("want client and server (v1.36.x) versions, got:\n%s", r.Stdout)
	}

	r = cluster.RV(t, "version", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("kubectl rv version -o json: %s", r)
	}
	var rep struct {
		APIVersion    string
		Kind          string
		ClientVersion struct{ Version string }
		ServerVersion struct{ GitVersion string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, r.Stdout)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "Version" || rep.ClientVersion.Version == "" || !strings.HasPrefix(rep.ServerVersion.GitVersion, "v1.36.") {
		t.Errorf("unexpected version report: %+v", rep)
	}
}

func TestVersionClientOnlyNeedsNoCluster(t *testing.T) {
	r := cluster.RV(t, "version", "--client", "--server", "https://127.0.0.1:1")
	if r.Code != 0 || strings.Contains(r.Stdout, "Server Version") {
		t.Fatalf("version --client should not contact the server: %s", r)
	}
}

func TestUnknownFlagExits2NamingIt(t *testing.T) {
	r := cluster.RV(t, "version", "--no-such-flag")
	if r.Code != 2 {
		t.Fatalf("want exit 2, got %s", r)
	}
	if !strings.Contains(r.Stderr, "--no-such-flag") {
		t.Errorf("the error should name the flag: %q", r.Stderr)
	}
}

func TestUnreachableServerExits3NamingIt(t *testing.T) {
	// Port 1 on loopback: nothing listens there, the connection is refused at once.
	r := cluster.RV(t, "version", "--server", "https://127.0.0.1:1", "--request-timeout", "5s")
	if r.Code != 3 {
		t.Fatalf("want exit 3, got %s", r)
	}
	if !strings.Contains(r.Stderr, "127.0.0.1:1") {
		t.Errorf("the error should name the server: %q", r.Stderr)
	}
}

func TestReadOnlyContextRunsVersion(t *testing.T) {
	r := cluster.RV(t, "version", "--context", "rv-readonly")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Server Version: v1.36.") {
		t.Fatalf("read-only context: %s", r)
	}
}

func TestNoRightsContextHasNoRights(t *testing.T) {
	// The fixture other tests rely on: rv-nobody may read /version
	// (system:public-info-viewer) but not list anything.
	r := cluster.Kubectl(t, "get", "pods", "--context", "rv-nobody")
	if r.Code == 0 {
		t.Fatalf("rv-nobody should not be allowed to list pods: %s", r)
	}
}

// TestVersionBadKubeconfigPrintsNothingOnStdout: exit 2 (bad input) leaves
// standard output empty, as docs/exit-codes.md says; only the error, on
// standard error, names the file.
func TestVersionBadKubeconfigPrintsNothingOnStdout(t *testing.T) {
	r := cluster.RV(t, "version", "--kubeconfig", "/nonexistent/kubeconfig")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "/nonexistent/kubeconfig") {
		t.Fatalf("version --kubeconfig /nonexistent/kubeconfig: want exit 2, empty stdout, the file named on stderr; got %s", r)
	}
}
