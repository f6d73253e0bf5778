package predict

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// TestClassifyPredictErrRefused: a 403 is the one permission hint
// (exitcode.Refused, exit 3), naming the object, the resource and
// namespace the server refused, and the offline way out; other errors keep
// their words.
func TestClassifyPredictErrRefused(t *testing.T) {
	web := predict.Target{Input: predict.Input{Ref: predict.ObjectRef{Kind: "Deployment", Namespace: "demo", Name: "web", Source: "web.yaml:1"}}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New(`User "bob" cannot patch resource "deployments"`))
	tests := []struct {
		name     string
		target   predict.Target
		err      error
		wantCode int
		want     string
	}{
		{"a refused dry run", web, forbidden, exitcode.CodeCluster,
			`web.yaml:1: the API server refused one of predict's requests (403 Forbidden): your user needs get, and the verbs of the writes predicted (a dry run is authorized as the write itself), on deployments.apps in namespace demo; without them, predict --offline --live FILE: deployments.apps "web" is forbidden: User "bob" cannot patch resource "deployments"`},
		{"a 403 without details, of a cluster-scoped object", predict.Target{Input: predict.Input{Ref: predict.ObjectRef{Kind: "Namespace", Name: "demo"}}},
			apierrors.NewForbidden(schema.GroupResource{}, "", errors.New("no")), exitcode.CodeCluster,
			`Namespace demo: the API server refused one of predict's requests (403 Forbidden): your user needs get, and the verbs of the writes predicted (a dry run is authorized as the write itself), on the object's resource; without them, predict --offline --live FILE: forbidden: no`},
		{"unreachable", web, apierrors.NewServiceUnavailable("down"), exitcode.CodeCluster, "web.yaml:1: down"},
		{"bad input", web, errors.New("bad patch"), exitcode.CodeUsage, "web.yaml:1: bad patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classifyPredictErr(tt.target, tt.err)
			if code := exitcode.Classify(got); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
