// Package earlyhandoff hands kubectl-rv over to rv-offline or rv-full
// during package initialisation, for the command lines handoff.Target
// names (predict --offline, simulate; with --schema, rv-full): it imports
// only pkg/handoff (the standard library's packages), so Go initialises
// it before client-go and the rest of kubectl-rv, whose start-up a
// command that runs in rv-offline would otherwise pay too (about 14 ms of
// CPU on predict --offline). Only cmd/kubectl-rv imports it: rv-offline
// hands only predict --offline --schema and conflicts --source on, once
// their flags are parsed, and rv-full never hands over.
package earlyhandoff

import "github.com/kubectl-rv/kubectl-rv/pkg/handoff"

func init() { handoff.Early() }
