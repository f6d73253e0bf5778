//go:build e2e

// Package e2e tests kubectl-rv end to end against a real control plane
// (see test/e2e/framework). Run with: make e2e.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// cluster is the one control plane of this test run.
var cluster *framework.Cluster

func TestMain(m *testing.M) {
	c, err := framework.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: the control plane could not be built or started: %v\n", err)
		os.Exit(1)
	}
	cluster = c
	fmt.Fprintf(os.Stderr, "e2e: running against %s\n", c.Describe())
	code := m.Run()
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
