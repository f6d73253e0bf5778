package exitcode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

func TestRefused(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New(`User "bob" cannot create`))
	tests := []struct {
		name      string
		err       error
		wantForb  bool
		wantCode  int
		wantError string
	}{
		{"a 403", forbidden, true, CodeCluster,
			`--write-probe demo: the API server refused a create (403 Forbidden): your user needs create on configmaps: configmaps is forbidden: User "bob" cannot create`},
		{"a wrapped 403", fmt.Errorf("listing: %w", forbidden), true, CodeCluster,
			`--write-probe demo: the API server refused a create (403 Forbidden): your user needs create on configmaps: listing: configmaps is forbidden: User "bob" cannot create`},
		{"a 403 among other errors", utilerrors.NewAggregate([]error{errors.New("x"), forbidden}), true, CodeCluster, ""},
		{"a 404 is left as it is", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "demo"), false, CodeUsage, `namespaces "demo" not found`},
		{"a plain error is left as it is", errors.New("boom"), false, CodeUsage, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsForbidden(tt.err); got != tt.wantForb {
				t.Errorf("IsForbidden = %v, want %v", got, tt.wantForb)
			}
			got := Refused(tt.err, "--write-probe demo", "a create", "create on configmaps")
			if code := Classify(got); code != tt.wantCode {
				t.Errorf("Classify = %d, want %d", code, tt.wantCode)
			}
			if tt.wantError != "" {
				if diff := cmp.Diff(tt.wantError, got.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
		})
	}
}
