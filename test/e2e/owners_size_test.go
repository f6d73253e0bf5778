//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// sizeReport mirrors owners --view size -o json (docs/owners.md).
type sizeReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Kinds      []struct {
		Kind                  string `json:"kind"`
		Objects               int    `json:"objects"`
		ObjectBytes           int64  `json:"objectBytes"`
		ManagedFieldsBytes    int64  `json:"managedFieldsBytes"`
		Entries               int64  `json:"entries"`
		MaxEntries            int    `json:"maxEntries"`
		NearCapObjects        int    `json:"nearCapObjects"`
		AncientObjects        int    `json:"ancientChangesObjects"`
		GeneratedApplyEntries int    `json:"generatedApplyEntries"`
		GeneratedObjects      int    `json:"generatedApplyObjects"`
	} `json:"kinds"`
	Top []sizeObject `json:"top"`
}

type sizeObject struct {
	Namespace          string   `json:"namespace"`
	Name               string   `json:"name"`
	ObjectBytes        int      `json:"objectBytes"`
	ManagedFieldsBytes int      `json:"managedFieldsBytes"`
	Entries            int      `json:"entries"`
	UpdateEntries      int      `json:"updateEntries"`
	NearCap            bool     `json:"nearCap"`
	AncientChanges     bool     `json:"ancientChanges"`
	GeneratedApply     []string `json:"generatedApply"`
}

// TestOwnersSizeMatchesManagedFields writes ConfigMaps with twelve Update
// managers (over the server's cap), with Apply managers named like pods
// and runs, and a plain one, then checks every number of --view size
// against what the objects' managedFields say.
func TestOwnersSizeMatchesManagedFields(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: many}\ndata: {seed: x}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")
	for i := range 12 {
		cs := cluster.Clientset(t, fmt.Sprintf("writer%02d/1.0", i))
		patch := fmt.Sprintf(`{"data":{"k%02d":"v"}}`, i)
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "many", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("patch as writer%02d: %v", i, err)
		}
	}
	generated := []string{"agent-x2k9q", "agent-b7c9d", "web-7d9c8b6f5d-x2k9q", "run-6f1c2a9e-1b2c-4d5e-8f90-1234567890ab"}
	for i, m := range append([]string{"ci"}, generated...) {
		cfg := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gen}\ndata: {f%d: v}\n", i)
		cluster.KubectlStdin(t, cfg, "-n", ns, "apply", "--server-side", "--field-manager="+m, "-f", "-")
	}
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\ndata: {a: b}\n", "-n", ns, "apply", "--server-side", "--field-manager=ci", "-f", "-")

	// Every number, computed from the objects themselves.
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(cluster.MustKubectl(t, "-n", ns, "get", "configmaps", "-o", "json", "--show-managed-fields")), &list); err != nil {
		t.Fatal(err)
	}
	want := map[string]sizeObject{}
	var objBytes, mfBytes, entries int64
	for _, it := range list.Items {
		md := it["metadata"].(map[string]any)
		mfs, _ := md["managedFields"].([]any)
		whole, _ := json.Marshal(it)
		mf, _ := json.Marshal(mfs)
		o := sizeObject{Namespace: ns, Name: md["name"].(string), ObjectBytes: len(whole), ManagedFieldsBytes: len(mf), Entries: len(mfs)}
		for _, raw := range mfs {
			e := raw.(map[string]any)
			switch e["operation"] {
			case "Update":
				o.UpdateEntries++
				o.AncientChanges = o.AncientChanges || e["manager"] == "ancient-changes"
			case "Apply":
				if _, ok := owners.GeneratedStem(e["manager"].(string)); ok {
					o.GeneratedApply = append(o.GeneratedApply, e["manager"].(string))
				}
			}
		}
		o.NearCap = o.UpdateEntries >= owners.MaxUpdateManagers-owners.DefaultNearCapMargin
		want[o.Name] = o
		objBytes += int64(o.ObjectBytes)
		mfBytes += int64(o.ManagedFieldsBytes)
		entries += int64(o.Entries)
	}
	if many := want["many"]; !many.AncientChanges || many.UpdateEntries != owners.MaxUpdateManagers {
		t.Fatalf("twelve Update managers should leave ten Update entries, one of them ancient-changes: %+v", many)
	}
	if len(want["gen"].GeneratedApply) != len(generated) {
		t.Fatalf("the generated Apply managers are not all in gen's managedFields: %+v", want["gen"])
	}

	r := cluster.RV(t, "owners", "-n", ns, "configmaps", "--view", "size", "-o", "json", "--chunk-size", "1")
	if r.Code != 0 {
		t.Fatalf("owners --view size -o json: %s", r)
	}
	var rep sizeReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "OwnersSizeReport" || len(rep.Kinds) != 1 {
		t.Fatalf("want one kind in an OwnersSizeReport: %s", r.Stdout)
	}
	k := rep.Kinds[0]
	if k.Kind != "ConfigMap" || k.Objects != len(list.Items) || k.ObjectBytes != objBytes || k.ManagedFieldsBytes != mfBytes || k.Entries != entries ||
		k.NearCapObjects != 1 || k.AncientObjects != 1 || k.GeneratedApplyEntries != len(generated) || k.GeneratedObjects != 1 {
		t.Errorf("ConfigMap totals %+v; want %d objects, %d object bytes, %d managedFields bytes, %d entries, 1 near the cap, 1 with ancient-changes, %d generated Apply entries in 1 object",
			k, len(list.Items), objBytes, mfBytes, entries, len(generated))
	}
	if len(rep.Top) != len(list.Items) {
		t.Fatalf("top has %d objects, want all %d", len(rep.Top), len(list.Items))
	}
	for i, got := range rep.Top {
		w := want[got.Name]
		if got.Namespace != w.Namespace || got.ObjectBytes != w.ObjectBytes || got.ManagedFieldsBytes != w.ManagedFieldsBytes || got.Entries != w.Entries ||
			got.UpdateEntries != w.UpdateEntries || got.NearCap != w.NearCap || got.AncientChanges != w.AncientChanges || strings.Join(got.GeneratedApply, ",") != strings.Join(w.GeneratedApply, ",") {
			t.Errorf("%s: got %+v, want %+v", got.Name, got, w)
		}
		if i > 0 && got.ManagedFieldsBytes > rep.Top[i-1].ManagedFieldsBytes {
			t.Errorf("top is not heaviest first: %s after %s", got.Name, rep.Top[i-1].Name)
		}
	}

	r = cluster.RV(t, "owners", "-n", ns, "configmaps", "--view", "size", "--top", "1")
	if r.Code != 0 || !strings.Contains(r.Stdout, "HEAVIEST 1 BY MANAGEDFIELDS BYTES") || !strings.Contains(r.Stdout, "ConfigMap/many") || !strings.Contains(r.Stdout, "ancient-changes") {
		t.Errorf("the size table should list many as the heaviest, over the cap: %s", r)
	}
}
