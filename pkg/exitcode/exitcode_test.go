package exitcode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCode(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, CodeOK},
		{"usage", Usagef("--timeout must be positive"), CodeUsage},
		{"wrapped usage keeps its code", fmt.Errorf("loading: %w", Usagef("bad")), CodeUsage},
		{"finding", Findingf("2 objects lag"), CodeFinding},
		{"silent finding", SilentFinding(), CodeFinding},
		{"explicit cluster", Cluster(errors.New("boom")), CodeCluster},
		{"forbidden", apierrors.NewForbidden(gr, "web", errors.New("no")), CodeCluster},
		{"unauthorized", apierrors.NewUnauthorized("who are you"), CodeCluster},
		{"service unavailable", apierrors.NewServiceUnavailable("later"), CodeCluster},
		{"connection refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:1/version", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, CodeCluster},
		{"deadline", fmt.Errorf("listing: %w", context.DeadlineExceeded), CodeCluster},
		{"not found is input", apierrors.NewNotFound(gr, "web"), CodeUsage},
		{"unknown resource type is input", &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: "foos"}}, CodeUsage},
		{"anything else is input", errors.New("something odd"), CodeUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.err); got != tt.want {
				t.Errorf("Code(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestSilent(t *testing.T) {
	if !IsSilent(SilentFinding()) {
		t.Error("SilentFinding should be silent")
	}
	if IsSilent(Findingf("x")) || IsSilent(errors.New("x")) {
		t.Error("ordinary errors are not silent")
	}
	if got := SilentFinding().Error(); got != "exit status 1" {
		t.Errorf("SilentFinding().Error() = %q", got)
	}
}
