//go:build e2e

// Package e2e tests kubectl-rv end to end against a real control plane
// (see test/e2e/framework). Run with: make e2e.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// cluster is the one control plane of this test run.
var cluster *framework.Cluster

// TestMain starts the shared control plane, and in the background the
// release build (releaseBuild) and the aged and kine planes (startPlanes),
// then runs the tests.
//
// Most tests run one after the other: some restart the API server, pause
// the controllers or remove types. The tests that mostly wait (doctor on
// its own planes and through its proxies, leases, etcd conformance, the
// release's check) call t.Parallel(): Go runs them after every other test,
// all together (make e2e's -parallel), so their waits overlap. A parallel
// test may restart the API server only before its t.Parallel() call, and
// pauses the controllers and removes types of the shared plane never.
func TestMain(m *testing.M) {
	c, err := framework.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: the control plane could not be built or started: %v\n", err)
		os.Exit(1)
	}
	cluster = c
	fmt.Fprintf(os.Stderr, "e2e: running against %s\n", c.Describe())
	flag.Parse()
	if selected("TestReleaseInstallsLikeKrewAndRunsThroughKubectl") || selected("TestCIDocPipelines") {
		startRelease()
	}
	startPlanes()
	code := m.Run()
	stopRelease()
	if err := stopPlanes(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the extra control planes: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// selected reports whether the -run and -skip patterns (parsed) select
// the top-level test name: TestMain starts what such a test needs in the
// background only then. A pattern this cannot read selects it; the test
// starts what it needs itself otherwise.
func selected(name string) bool {
	pattern := func(flagName string) string {
		if f := flag.Lookup(flagName); f != nil {
			return f.Value.String()
		}
		return ""
	}
	// The part before the first / is matched against top-level names.
	if run, _, _ := strings.Cut(pattern("test.run"), "/"); run != "" {
		if re, err := regexp.Compile(run); err == nil && !re.MatchString(name) {
			return false
		}
	}
	// A skip pattern with a / skips subtests only.
	if skip := pattern("test.skip"); skip != "" && !strings.Contains(skip, "/") {
		if re, err := regexp.Compile(skip); err == nil && re.MatchString(name) {
			return false
		}
	}
	return true
}
