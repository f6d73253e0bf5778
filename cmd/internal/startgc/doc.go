// Package startgc spares short commands the garbage collections of
// start-up. Package initialisation allocates about 4.2 MB before main
// (client-go's scheme, the etcd client's protobuf registrations,
// tablewriter's width table), past the 4 MB at which Go runs its first
// collection; a command such as owners -f or predict --offline then
// collects once or twice while it allocates a few megabytes more, at
// about 4 ms of CPU, a fifth of its run.
//
// Its init raises the GC percent to Percent, so the first collection
// comes at 4 MB * Percent / 100 (16 MB) instead, and restores the
// previous percent (GOGC's default, 100) as soon as that first
// collection has run, unless the percent was set again meanwhile: a command that allocates more than that, such as
// watch, churn, conflicts or simulate, keeps Go's default pacing, and so
// its memory bounds, from then on; only its heap before the first
// collection is larger. A GOGC set in the environment is left alone.
//
// It is imported, blank, by cmd/kubectl-rv's main only, and imports
// nothing but the runtime, so that it is initialised before the packages
// that allocate
// (Go initialises, among the packages whose imports are ready, the first
// by import path): GODEBUG=inittrace=1 shows its place.
package startgc
