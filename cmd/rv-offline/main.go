// Command rv-offline is kubectl rv with the API server's rules for the
// built-in kinds linked (pkg/serverrules): kubectl-rv hands predict
// --offline and simulate over to it, with the same arguments. It links
// nothing else that kubectl-rv leaves out: predict --offline --schema
// (custom resources' rules) and conflicts --source (the log services'
// clients) hand over from it to rv-full, so that a prediction of built-in
// kinds does not pay their start-up. It is installed beside kubectl-rv,
// not on PATH under a kubectl- name, so kubectl does not list it as a
// plugin.
package main

import (
	"os"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc" // first: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"
)

func main() {
	os.Exit(cmd.Main(serverrules.Rules{}))
}
