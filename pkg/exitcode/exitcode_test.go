package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, CodeOK},
		{"usage", Usagef("--timeout must be positive"), CodeUsage},
		{"wrapped usage keeps its code", fmt.Errorf("loading: %w", Usagef("bad")), CodeUsage},
		{"finding", Findingf("%d objects lag", 2), CodeFinding},
		{"silent finding", SilentFinding(), CodeFinding},
		{"explicit cluster", Cluster(errors.New("boom")), CodeCluster},
		{"interrupted", fmt.Errorf("listing: %w", context.Canceled), CodeInterrupted},
		{"forbidden", apierrors.NewForbidden(gr, "web", errors.New("no")), CodeCluster},
		{"unauthorized", apierrors.NewUnauthorized("who are you"), CodeCluster},
		{"service unavailable", apierrors.NewServiceUnavailable("later"), CodeCluster},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), CodeCluster},
		{"history compacted", apierrors.NewResourceExpired("too old resource version"), CodeCluster},
		{"other 5xx", apierrors.NewGenericServerResponse(502, "get", gr, "web", "bad gateway", 0, true), CodeCluster},
		{"connection refused", &url.Error{Op: "Get", URL: "https://127.0.0.1:1/version", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, CodeCluster},
		{"flattened connection refused", errors.New("Get \"https://127.0.0.1:1/api\": dial tcp: connection refused"), CodeCluster},
		{"deadline", fmt.Errorf("listing: %w", context.DeadlineExceeded), CodeCluster},
		{"not found is input", apierrors.NewNotFound(gr, "web"), CodeUsage},
		{"invalid is input", apierrors.NewBadRequest("no"), CodeUsage},
		{"unknown resource type is input", &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Resource: "foos"}}, CodeUsage},
		{"cobra argument error", errors.New(`accepts 1 arg(s), received 2`), CodeUsage},
		{"cobra unknown command", errors.New(`unknown command "x" for "kubectl rv"`), CodeUsage},
		{"anything else is input", errors.New("something odd"), CodeUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestFindingf(t *testing.T) {
	err := Findingf("%d fights seen (%s)", 2, "--fail-on-fight")
	if got, want := err.Error(), "2 fights seen (--fail-on-fight)"; got != want {
		t.Errorf("Findingf(...).Error() = %q, want %q", got, want)
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

// TestLocalFileErrorsAreNeverTheClusters: a local path's error exits 2,
// though syscall.Errno passes for a net.Error; a network error inside an
// *net.OpError still exits 3.
func TestLocalFileErrorsAreNeverTheClusters(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&fs.PathError{Op: "open", Path: "/nonexistent/dir/s.svg", Err: syscall.ENOENT}, CodeUsage},
		{fmt.Errorf("--report: %w", &fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}), CodeUsage},
		{syscall.ENOSPC, CodeUsage},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, CodeCluster},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
