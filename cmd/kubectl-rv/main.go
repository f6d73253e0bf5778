// Command kubectl-rv is the kubectl rv plugin: run as kubectl rv once it is on PATH.
//
// It does not link the API server's rules (pkg/serverrules), whose package
// initialisation every command would pay: the commands that run them
// (predict --offline, simulate) hand over to rv-offline, installed beside
// it (cmd/rv-offline), the common command lines during package
// initialisation (internal/earlyhandoff). Nor does it link custom
// resources' rules or the log services' clients: predict --offline
// --schema and conflicts --source hand over to rv-full (cmd/rv-full).
package main

import (
	"os"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc"                 // first: see its doc
	_ "github.com/kubectl-rv/kubectl-rv/cmd/kubectl-rv/internal/earlyhandoff" // before client-go: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

func main() {
	os.Exit(cmd.Main(nil))
}
