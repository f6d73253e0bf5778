// Command kubectl-rv is the kubectl rv plugin: run as kubectl rv once it is on PATH.
//
// It does not link the API server's rules (pkg/serverrules), whose package
// initialisation every command would pay: the commands that run them
// (predict --offline, simulate) hand over to rv-offline, installed beside
// it (cmd/rv-offline), the common command lines during package
// initialisation (internal/earlyhandoff).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc"                 // first: see its doc
	_ "github.com/kubectl-rv/kubectl-rv/cmd/kubectl-rv/internal/earlyhandoff" // before client-go: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.NewCmdRV(streams, nil).ExecuteContext(ctx)
	stop()
	os.Exit(cmd.HandleError(streams.ErrOut, err))
}
