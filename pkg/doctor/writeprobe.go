package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// probeFieldManager names doctor's writes in managedFields.
const probeFieldManager = "kubectl-rv-doctor"

// ErrNoProbeNamespace says --write-probe named a namespace that does not
// exist.
var ErrNoProbeNamespace = errors.New("namespace not found")

// PreflightWriteProbe asks the server, with a dry-run create that persists
// nothing, whether the write probe can run in namespace: before any check,
// so that a missing namespace (ErrNoProbeNamespace, bad input) or a refused
// create (the server's 403) is said at once instead of as a failed check.
func PreflightWriteProbe(ctx context.Context, c dynamic.Interface, namespace string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"generateName": "kubectl-rv-doctor-"},
	}}
	_, err := c.Resource(configMaps).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: probeFieldManager})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %v", ErrNoProbeNamespace, err)
	}
	return err
}

// writeProbe is the only check that writes: a ConfigMap created, updated
// twice and deleted, whose resourceVersions must increase and whose watch
// must see the writes in that order. The ConfigMap is deleted in any case.
func writeProbe(ctx context.Context, c dynamic.Interface, namespace string, cfg Config) Check {
	ri := c.Resource(configMaps).Namespace(namespace)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"generateName": "kubectl-rv-doctor-"},
		"data":     map[string]any{"probe": "0"},
	}}
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: probeFieldManager})
	if err != nil {
		return fail(WriteRVsIncreasing, fmt.Sprintf("creating a ConfigMap in %s failed: %v", namespace, err), "code", itoa(statusCode(err)))
	}
	name := created.GetName()
	defer func() { _ = ri.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{}) }()
	secs := int64((cfg.WatchTimeout + cfg.Grace).Seconds())
	w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: created.GetResourceVersion(), TimeoutSeconds: &secs})
	if err != nil {
		return fail(WriteRVsIncreasing, fmt.Sprintf("watching the probe ConfigMap failed: %v", err), "code", itoa(statusCode(err)))
	}
	defer w.Stop()
	written := []string{created.GetResourceVersion()}
	cur := created
	for _, v := range []string{"1", "2"} {
		cur.Object["data"] = map[string]any{"probe": v}
		if cur, err = ri.Update(ctx, cur, metav1.UpdateOptions{FieldManager: probeFieldManager}); err != nil {
			return fail(WriteRVsIncreasing, fmt.Sprintf("updating the probe ConfigMap failed: %v", err), "code", itoa(statusCode(err)))
		}
		written = append(written, cur.GetResourceVersion())
	}
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fail(WriteRVsIncreasing, fmt.Sprintf("deleting the probe ConfigMap failed: %v", err), "code", itoa(statusCode(err)))
	}
	return judgeWrites(written, writesWatched(w, 3))
}

// writesWatched reads up to n events' types and resourceVersions.
func writesWatched(w watch.Interface, n int) []string {
	var out []string
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			continue
		}
		out = append(out, string(ev.Type)+"@"+resourceVersionOf(ev.Object))
		if len(out) == n || ev.Type == watch.Error {
			break
		}
	}
	return out
}

func judgeWrites(written, events []string) Check {
	values := []string{"written", strings.Join(written, ","), "watched", strings.Join(events, ",")}
	for i := 1; i < len(written); i++ {
		if c, err := resourceversion.CompareResourceVersion(written[i], written[i-1]); err != nil || c <= 0 {
			return fail(WriteRVsIncreasing, fmt.Sprintf("write %d answered resourceVersion %s after %s: not increasing", i+1, written[i], written[i-1]), values...)
		}
	}
	want := []string{"MODIFIED@" + written[1], "MODIFIED@" + written[2]}
	if len(events) != 3 || events[0] != want[0] || events[1] != want[1] || !strings.HasPrefix(events[2], "DELETED@") {
		return fail(WriteRVsIncreasing, fmt.Sprintf("the watch from the create saw %s, want %s, %s, DELETED", strings.Join(events, ", "), want[0], want[1]), values...)
	}
	del := strings.TrimPrefix(events[2], "DELETED@")
	if c, err := resourceversion.CompareResourceVersion(del, written[2]); err != nil || c <= 0 {
		return fail(WriteRVsIncreasing, fmt.Sprintf("the delete's resourceVersion %s is not after the last update's %s", del, written[2]), values...)
	}
	return pass(WriteRVsIncreasing, fmt.Sprintf("create %s, updates %s and %s, delete %s: increasing, and watched in order", written[0], written[1], written[2], del), values...)
}
