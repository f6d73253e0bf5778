// Package earlyhandoff hands kubectl-rv over to rv-offline during package
// initialisation, for the command lines handoff.Target names: it imports
// only pkg/handoff (the standard library's packages), so Go initialises
// it before client-go and the rest of kubectl-rv, whose start-up a
// command that runs in rv-offline would otherwise pay too (about 14 ms of
// CPU on predict --offline). Only cmd/kubectl-rv imports it: rv-offline
// never hands over.
package earlyhandoff

import "github.com/kubectl-rv/kubectl-rv/pkg/handoff"

func init() { handoff.Early() }
