//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConflictsScenario: from the audit log of four writers racing with
// RetryOnConflict, --scenario writes a file that simulate run accepts and
// runs, with one actor per writer, named and managed as in the log, and
// 409s among them.
func TestConflictsScenario(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	setup := cluster.Clientset(t, "e2e-setup")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot", Namespace: ns}, Data: map[string]string{}}
	if _, err := setup.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	segment := auditSegment(t)
	logs := raceRMW(t, ns, "rv-e2e-scenario", "rmw", 4, 8, 400*time.Millisecond)
	seen := 0
	for _, l := range logs {
		seen += l.Conflicts
	}
	if seen == 0 {
		t.Fatalf("four writers at once made no 409: the test made no contention")
	}
	log := segment()
	file := filepath.Join(t.TempDir(), "hot.yaml")
	r := cluster.RV(t, "conflicts", "--audit-log", log, "--retry-window", "250ms", "--object", "configmaps/hot", "-n", ns, "--scenario", file)
	if r.Code != 0 {
		t.Fatalf("conflicts --scenario: %s", r)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# Written by kubectl rv conflicts --scenario from the audit log") || !strings.Contains(string(b), "configmaps/"+ns+"/hot") {
		t.Errorf("the scenario does not say where it came from:\n%s", b)
	}
	r = cluster.RV(t, "simulate", "run", file, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("simulate run %s: %s\n%s", file, r, b)
	}
	var sim struct {
		Kind   string
		Actors []struct {
			Name, FieldManager, Method, Retry string
			Attempts, Conflicts               int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &sim); err != nil || sim.Kind != "SimulationReport" {
		t.Fatalf("simulate run -o json: %v kind %q\n%s", err, sim.Kind, r.Stdout)
	}
	var names []string
	conflicts := 0
	for _, a := range sim.Actors {
		names = append(names, a.Name+"/"+a.FieldManager+"/"+a.Method)
		conflicts += a.Conflicts
	}
	slices.Sort(names)
	want := []string{"rmw-0/rmw-0/update", "rmw-1/rmw-1/update", "rmw-2/rmw-2/update", "rmw-3/rmw-3/update"}
	if !slices.Equal(names, want) {
		t.Errorf("actors (name/manager/method) %v, want %v\n%s", names, want, b)
	}
	if conflicts == 0 {
		t.Errorf("the simulation of writers who saw %d 409s made none\n%s\n%s", seen, b, r.Stdout)
	}
	// Nothing to reproduce: exit 2 and no file.
	none := filepath.Join(t.TempDir(), "none.yaml")
	r = cluster.RV(t, "conflicts", "--audit-log", log, "--object", "configmaps/absent", "-n", ns, "--scenario", none)
	if _, err := os.Stat(none); r.Code != 2 || !os.IsNotExist(err) || !strings.Contains(r.Stderr, "nothing to reproduce") {
		t.Errorf("--scenario of an object without writes: want exit 2 and no file (stat: %v): %s", err, r)
	}
}
