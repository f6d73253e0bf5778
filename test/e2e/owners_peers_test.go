//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// driftReport is the drift section of owners -o json (docs/owners.md).
type driftReport struct {
	Items []struct {
		Drift *struct {
			ExpectedManager string `json:"expectedManager"`
			Inferred        bool   `json:"inferred"`
			Fields          []struct {
				Path   string `json:"path"`
				Owners []struct {
					Manager     string `json:"manager"`
					Subresource string `json:"subresource"`
				} `json:"owners"`
			} `json:"fields"`
			StatusFieldsLeftOut int `json:"statusFieldsLeftOut"`
			ScaleFieldsLeftOut  int `json:"scaleFieldsLeftOut"`
		} `json:"drift"`
	} `json:"items"`
}

// setUpCIDeployment applies a Deployment as the manager ci, scales it with
// kubectl scale (the /scale subresource) and writes a condition through
// /status with kubectl patch, then waits for the controllers.
func setUpCIDeployment(t *testing.T, ns string) {
	t.Helper()
	cluster.KubectlStdin(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
  labels: {app: x}
spec:
  replicas: 1
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        command: [sleep, "3600"]
`, "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	waitSettled(t, deploymentsGVR, ns, "x")
	cluster.MustKubectl(t, "-n", ns, "scale", "deployment", "x", "--replicas=3")
	cluster.MustKubectl(t, "-n", ns, "patch", "deployment", "x", "--subresource=status", "--type=merge",
		"-p", `{"status":{"conditions":[{"type":"example.com/Audited","status":"True","reason":"E2E","lastUpdateTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	waitSettled(t, deploymentsGVR, ns, "x")
}

// othersFields computes, from an object's managedFields, the leaves of
// the fields every entry owns that an entry whose manager is not expected
// owns, and by which manager/subresource: what the drift check must find.
// A map or list item owned as a whole (".") with fields under it is those
// fields, not one more.
func othersFields(t *testing.T, obj map[string]any, expected string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	mfs, _ := obj["metadata"].(map[string]any)["managedFields"].([]any)
	all := &fieldpath.Set{}
	type entrySet struct {
		owner string
		set   *fieldpath.Set
	}
	var others []entrySet
	for _, raw := range mfs {
		js, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		var e metav1.ManagedFieldsEntry
		if err := json.Unmarshal(js, &e); err != nil {
			t.Fatal(err)
		}
		if e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			t.Fatal(err)
		}
		all = all.Union(set)
		if e.Manager != expected {
			others = append(others, entrySet{e.Manager + "/" + e.Subresource, set})
		}
	}
	leaves := all.Leaves()
	for _, o := range others {
		o.set.Iterate(func(p fieldpath.Path) {
			if leaves.Has(p) {
				k := managedfields.PathString(p)
				out[k] = append(out[k], o.owner)
			}
		})
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// TestOwnersDriftThroughScaleAndStatus: the drift from ci is every leaf
// another manager owns, as the object's managedFields say; by default the
// fields only /status or /scale writers own (the controllers' status,
// kubectl scale's .spec.replicas, as an autoscaler's would be) are left
// out and counted on stderr, and --include-status and --include-scale
// bring them back. A map kubectl create owns as a whole is its leaves.
func TestOwnersDriftThroughScaleAndStatus(t *testing.T) {
	ns := cluster.Namespace(t)
	setUpCIDeployment(t, ns)

	r := cluster.RV(t, "owners", "-n", ns, "deploy/x", "--expect-manager", "ci", "--include-scale")
	if r.Code != 1 {
		t.Fatalf("drift from ci should exit 1: %s", r)
	}
	if replicas := replicasRow(r.Stdout); !strings.HasSuffix(replicas, " Update scale") {
		t.Errorf("with --include-scale .spec.replicas should be listed as written through scale, got %q:\n%s", replicas, r.Stdout)
	}
	if !strings.Contains(r.Stderr, "owned by a manager other than the expected one") {
		t.Errorf("stderr should sum up the drift: %s", r.Stderr)
	}
	r = cluster.RV(t, "owners", "-n", ns, "deploy/x", "--expect-manager", "ci")
	if replicasRow(r.Stdout) != "" || !strings.Contains(r.Stderr, "1 field written through the scale subresource left out") {
		t.Errorf("by default .spec.replicas, which only kubectl scale (through /scale) owns besides ci, should be left out and counted on stderr: %s", r)
	}

	// Every other manager's leaf, and nothing else, from one snapshot
	// piped in (the controllers may write again between two reads).
	snapshot := cluster.MustKubectl(t, "-n", ns, "get", "deploy", "x", "-o", "json", "--show-managed-fields")
	var obj map[string]any
	if err := json.Unmarshal([]byte(snapshot), &obj); err != nil {
		t.Fatal(err)
	}
	want := othersFields(t, obj, "ci")
	got, _, _ := pipedDrift(t, snapshot, "--include-status", "--include-scale")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drift with --include-status --include-scale differs from the other managers' managedFields (-want +got):\n%s", diff)
	}
	// By default the fields only /status or /scale writers own are left
	// out, and counted.
	wantDefault, statusOnly, scaleOnly := map[string][]string{}, 0, 0
	for p, owners := range want {
		var kept []string
		status := false
		for _, o := range owners {
			switch {
			case strings.HasSuffix(o, "/status"):
				status = true
			case !strings.HasSuffix(o, "/scale"):
				kept = append(kept, o)
			}
		}
		switch {
		case len(kept) > 0:
			wantDefault[p] = kept
		case status:
			statusOnly++
		default:
			scaleOnly++
		}
	}
	gotDefault, leftStatus, leftScale := pipedDrift(t, snapshot)
	if diff := cmp.Diff(wantDefault, gotDefault); diff != "" || leftStatus != statusOnly || statusOnly == 0 || leftScale != scaleOnly || scaleOnly != 1 {
		t.Errorf("default drift (-want +got):\n%s\n%d fields left out as /status-only, want %d (and some); %d as /scale-only, want %d (and 1)",
			diff, leftStatus, statusOnly, leftScale, scaleOnly)
	}
	if s := strings.Join(got[".spec.replicas"], ","); !strings.HasSuffix(s, "/scale") {
		t.Errorf(".spec.replicas drift owners = %q, want a /scale writer", s)
	}
	var viaStatus bool
	for p, owners := range got {
		for _, o := range owners {
			viaStatus = viaStatus || (strings.HasPrefix(p, ".status") && strings.HasSuffix(o, "/status"))
		}
	}
	if !viaStatus || len(got[`.status.conditions[type="example.com/Audited"].status`]) == 0 {
		t.Errorf("the /status writes (the controller's, kubectl patch's condition) should be drift through status: %v", got)
	}

	// --drift infers ci, the only applier, and says so.
	r = cluster.RV(t, "owners", "-n", ns, "deploy/x", "--drift", "--field", ".spec", "--include-scale")
	if r.Code != 1 || !strings.Contains(r.Stderr, `expecting its main applier "ci"`) || !strings.Contains(r.Stdout, ".spec.replicas") || strings.Contains(r.Stdout, ".status") {
		t.Errorf("--drift --field .spec --include-scale should infer ci and list only .spec.replicas: %s", r)
	}

	// Nothing but ci: exit 0.
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	r = cluster.RV(t, "owners", "-n", ns, "cm/c", "--expect-manager", "ci")
	if r.Code != 0 || r.Stdout != "" || !strings.Contains(r.Stderr, `no field is owned by a manager other than "ci"`) {
		t.Errorf("a ConfigMap only ci wrote has no drift: %s", r)
	}

	// kubectl create owns .data as a whole and .data.a; ci applies .data.b.
	// The drift is .data.a, not .data.
	cluster.MustKubectl(t, "-n", ns, "create", "configmap", "d", "--from-literal=a=1")
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: {b: \"2\"}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	cm := cluster.MustKubectl(t, "-n", ns, "get", "cm", "d", "-o", "json", "--show-managed-fields")
	var cmObj map[string]any
	if err := json.Unmarshal([]byte(cm), &cmObj); err != nil {
		t.Fatal(err)
	}
	gotCM, _, _ := pipedDrift(t, cm)
	if diff := cmp.Diff(othersFields(t, cmObj, "ci"), gotCM); diff != "" || len(gotCM) != 1 || gotCM[".data.a"] == nil {
		t.Errorf("drift of a ConfigMap kubectl create made and ci applied to, want .data.a only (-want +got):\n%s\ngot %v", diff, gotCM)
	}
}

// replicasRow is the MANAGER OPERATION SUBRESOURCE of .spec.replicas in a
// drift table, "" when it has no row.
func replicasRow(table string) string {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[0] == ".spec.replicas" {
			return strings.Join(f[1:4], " ")
		}
	}
	return ""
}

// pipedDrift runs owners --expect-manager ci -o json on a piped snapshot
// (exit 1 when there is drift, else 0) and returns the drift's fields
// (path -> manager/subresource of each other owner) and how many
// /status-only and /scale-only fields it left out.
func pipedDrift(t *testing.T, snapshot string, flags ...string) (map[string][]string, int, int) {
	t.Helper()
	args := append([]string{"rv", "owners", "--expect-manager", "ci", "-o", "json"}, flags...)
	res := cluster.Run(t, strings.NewReader(snapshot), "kubectl", args...)
	var rep driftReport
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil || len(rep.Items) != 1 || rep.Items[0].Drift == nil {
		t.Fatalf("kubectl %s on the piped snapshot, no drift section: %v\n%s", strings.Join(args, " "), err, res)
	}
	// Exit 1 when there is drift, 0 when there is none.
	if want := min(len(rep.Items[0].Drift.Fields), 1); res.Code != want {
		t.Fatalf("kubectl %s on the piped snapshot: exit %d with %d drifted fields, want %d", strings.Join(args, " "), res.Code, len(rep.Items[0].Drift.Fields), want)
	}
	got := map[string][]string{}
	for _, f := range rep.Items[0].Drift.Fields {
		for _, o := range f.Owners {
			got[f.Path] = append(got[f.Path], o.Manager+"/"+o.Subresource)
		}
		sort.Strings(got[f.Path])
	}
	return got, rep.Items[0].Drift.StatusFieldsLeftOut, rep.Items[0].Drift.ScaleFieldsLeftOut
}

func TestOwnersTimeFormatsAreStable(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	cs := cluster.Clientset(t, "e2e-reader")
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written := cm.ManagedFields[0].Time.UTC().Format(time.RFC3339)
	for _, view := range []string{"tree", "blame", "table", "summary"} {
		first := cluster.RV(t, "owners", "-n", ns, "cm/c", "--view", view, "--time", "full")
		time.Sleep(1100 * time.Millisecond) // let a relative age move on
		second := cluster.RV(t, "owners", "-n", ns, "cm/c", "--view", view, "--time", "full")
		if first.Code != 0 || first.Stdout != second.Stdout || !strings.Contains(first.Stdout, written) {
			t.Errorf("--view %s --time full should print %s and not change:\n%s\n---\n%s", view, written, first, second)
		}
		none := cluster.RV(t, "owners", "-n", ns, "cm/c", "--view", view, "--time", "none")
		header := " " + strings.Join(strings.Fields(strings.SplitN(none.Stdout, "\n", 2)[0]), " ") + " "
		if none.Code != 0 || strings.Contains(none.Stdout, "(Apply, ") || strings.Contains(header, " AGE ") || strings.Contains(header, " LAST WRITE ") ||
			(view != "blame" && strings.Contains(none.Stdout, written)) {
			t.Errorf("--view %s --time none should print no time: %s", view, none)
		}
	}
}

func TestOwnersReadsPipedStdin(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	dump := cluster.MustKubectl(t, "-n", ns, "get", "cm", "c", "-o", "yaml", "--show-managed-fields")

	r := cluster.Run(t, strings.NewReader(dump), "kubectl", "rv", "owners")
	if r.Code != 0 || !strings.Contains(r.Stdout, "ConfigMap "+ns+"/c (<stdin>:1)") || !strings.Contains(r.Stdout, "ci (Apply") {
		t.Errorf("owners with the dump piped in: %s", r)
	}
	r = cluster.Run(t, strings.NewReader(""), "kubectl", "rv", "owners")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "standard input was empty") {
		t.Errorf("an empty pipe must exit 2 with a message: %s", r)
	}

	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	cmd := cluster.Command(context.Background(), "kubectl", "rv", "owners")
	cmd.Stdin = devNull
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 2 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "standard input was empty") {
		t.Errorf("stdin from /dev/null must exit 2 (%v): stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
}

func TestOwnersTableOneRowPerOwner(t *testing.T) {
	ns := cluster.Namespace(t)
	setUpWeb(t, ns)
	rep := ownersJSON(t, "-n", ns, "deploy/web")
	r := cluster.RV(t, "owners", "-n", ns, "deploy/web", "--view", "table")
	if r.Code != 0 {
		t.Fatalf("table view: %s", r)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[0], ".") {
			rows[f[0]] = append(rows[f[0]], f[1]+" "+f[len(f)-1])
		}
	}
	multi := 0
	for _, f := range rep.Fields {
		// The table writes a dotted field name as ["a.b"]; the report keeps
		// the server's form.
		if strings.Contains(f.Path, ".kubernetes.io") {
			continue
		}
		var want []string
		mark := "-"
		if len(f.Owners) > 1 {
			mark = "MULTI"
			multi++
		}
		for _, o := range f.Owners {
			want = append(want, o.Manager+" "+mark)
		}
		if diff := cmp.Diff(want, rows[f.Path]); diff != "" {
			t.Errorf("rows of %s (-want +got):\n%s", f.Path, diff)
		}
	}
	if multi == 0 {
		t.Errorf("the Deployment has no shared field to check")
	}
}
