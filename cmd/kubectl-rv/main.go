// Command kubectl-rv is the kubectl rv plugin: run as kubectl rv once it is on PATH.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/kubectl-rv/internal/startgc" // first: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.NewCmdRV(streams).ExecuteContext(ctx)
	stop()
	os.Exit(cmd.HandleError(streams.ErrOut, err))
}
