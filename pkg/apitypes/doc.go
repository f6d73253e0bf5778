// Package apitypes finds the resource types a cluster serves through
// discovery: the listable and watchable types at their preferred versions,
// with a warning for each API group discovery could not read. Commands that
// work across every type (doctor, and the type scans of lag) start here.
//
// It does not list or watch objects, and it does not resolve TYPE/NAME
// arguments (pkg/cmd does, through cli-runtime's resource.Builder).
package apitypes
