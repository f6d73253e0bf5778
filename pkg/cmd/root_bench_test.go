package cmd

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// BenchmarkNewCmdRV is the command tree every run builds before it parses
// its arguments.
func BenchmarkNewCmdRV(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NewCmdRV(genericiooptions.NewTestIOStreamsDiscard())
	}
}
