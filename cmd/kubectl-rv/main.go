// Command kubectl-rv is the kubectl rv plugin: run as kubectl rv once it is
// on PATH.
package main

import (
	"os"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc" // first: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
