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

	"github.com/google/go-cmp/cmp"

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

// TestConflictsScenarioBusyScene: for each ConfigMap of the busy scene,
// conflicts --scenario writes a file whose run by simulate has, for every
// writer, the write methods it sent and the kinds of 409 it met
// (UPDATE-409 on a stale resourceVersion, APPLY-409 on fields another
// manager owns), as the writers' own logs say, and no negative lost
// updates. A writer whose log has no 409 meets none in the run, but for
// UPDATE-409s of a writer that sends a resourceVersion: the Poisson model
// makes those by chance.
func TestConflictsScenarioBusyScene(t *testing.T) {
	s := sharedBusyScene(t)
	for _, obj := range []string{"hot", "tick", "edit", "two"} {
		t.Run(obj, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), obj+".yaml")
			r := cluster.RV(t, "conflicts", "--audit-log", s.log, "-n", s.ns, "--object", "configmaps/"+obj, "--scenario", file)
			if r.Code != 0 {
				t.Fatalf("conflicts --scenario: %s", r)
			}
			b, _ := os.ReadFile(file)
			r = cluster.RV(t, "simulate", "run", file, "-o", "json")
			if r.Code != 0 {
				t.Fatalf("simulate run: %s\n%s", r, b)
			}
			var sim struct {
				Actors []struct {
					FieldManager, Method                   string
					Conflicts, ApplyConflicts, LostUpdates int
				}
				Invariants []struct {
					Name string
					Lost int
				}
			}
			if err := json.Unmarshal([]byte(r.Stdout), &sim); err != nil {
				t.Fatalf("simulate run -o json: %v\n%s", err, r.Stdout)
			}
			methods, kinds := map[string][]string{}, map[string][]string{}
			for _, a := range sim.Actors {
				methods[a.FieldManager] = append(methods[a.FieldManager], a.Method)
				if a.Conflicts > 0 && !slices.Contains(kinds[a.FieldManager], "UPDATE-409") {
					kinds[a.FieldManager] = append(kinds[a.FieldManager], "UPDATE-409")
				}
				if a.ApplyConflicts > 0 && !slices.Contains(kinds[a.FieldManager], "APPLY-409") {
					kinds[a.FieldManager] = append(kinds[a.FieldManager], "APPLY-409")
				}
				if a.LostUpdates < 0 {
					t.Errorf("%s lost %d updates", a.FieldManager, a.LostUpdates)
				}
			}
			for _, inv := range sim.Invariants {
				if inv.Lost < 0 {
					t.Errorf("invariant %s lost %d: a writer set the counter the others increment\n%s", inv.Name, inv.Lost, b)
				}
			}
			for manager, got := range methods {
				w, ok := s.writers[manager]
				if !ok {
					t.Errorf("actor %s is no writer of the scene\n%s", manager, b)
					continue
				}
				want := w.methods[obj]
				if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
					t.Errorf("writer %s sent %v to %s; the scenario's actors use (-want +got):\n%s\n%s", manager, want, obj, diff, b)
				}
				checkKinds(t, manager, obj, w, kinds[manager], b)
			}
		})
	}
}

// checkKinds compares the kinds of 409 a writer met in the run with those
// its log records.
func checkKinds(t *testing.T, manager, obj string, w *sceneWriter, got []string, file []byte) {
	t.Helper()
	var want []string
	for cause, n := range w.causes {
		k := "UPDATE-409"
		if cause == "ssa-field-conflict" {
			k = "APPLY-409"
		}
		if n > 0 && !slices.Contains(want, k) {
			want = append(want, k)
		}
	}
	if len(want) == 0 && slices.Equal(got, []string{"UPDATE-409"}) && slices.Contains(w.methods[obj], "update") {
		return // the Poisson model's chance 409s of an updater that met none
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("writer %s: kinds of 409 its log records vs the run's (-want +got):\n%s\n%s", manager, diff, file)
	}
}
