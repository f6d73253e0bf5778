//go:build windows

package handoff

// Early does nothing on Windows, where a process cannot be replaced:
// kubectl-rv runs rv-offline as a child once the command's flags are
// parsed (pkg/cmd).
func Early() {}
