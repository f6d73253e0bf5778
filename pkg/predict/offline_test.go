package predict

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestOfflineExecutorUnencodableLive checks that a live object JSON cannot
// encode fails as it always did, wherever the bad value is.
func TestOfflineExecutorUnencodableLive(t *testing.T) {
	for _, where := range [][]string{{"spec", "x"}, {"metadata", "managedFields"}} {
		t.Run(strings.Join(where, "."), func(t *testing.T) {
			live := liveWeb(t)
			if where[1] == "managedFields" {
				mf := live.Object["metadata"].(map[string]any)["managedFields"].([]any)
				mf[0].(map[string]any)["x"] = math.NaN()
			} else {
				live.Object["spec"].(map[string]any)["x"] = math.Inf(1)
			}
			_, want := live.MarshalJSON()
			_, err := NewOffline(nil).Executor(deployGVK, "web", live)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("Executor: %v, want %v", err, want)
			}
		})
	}
}

// TestPredictLeavesLiveAlone checks that a prediction does not change the
// live object, which the offline executor shares with Predict, nor the
// desired one, which requests share parts of.
func TestPredictLeavesLiveAlone(t *testing.T) {
	live := liveWeb(t)
	liveBefore := live.DeepCopy()
	desired := desiredWeb(t, "11", "nginx:2")
	unstructured.RemoveNestedField(desired.Object, "spec", "replicas")
	desiredBefore := desired.DeepCopy()
	ex, err := NewOffline(nil).Executor(deployGVK, "web", live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Predict(context.Background(), Config{FieldManager: "ci"}, Input{Desired: desired}, ex); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(liveBefore, live); diff != "" {
		t.Errorf("live changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(desiredBefore, desired); diff != "" {
		t.Errorf("desired changed (-before +after):\n%s", diff)
	}
}
