// Package version holds kubectl-rv's own version, set at build time through
// -ldflags "-X github.com/kubectl-rv/kubectl-rv/pkg/version.gitVersion=v0.1.0
// -X ...gitCommit=<sha> -X ...buildDate=<RFC 3339>" (see Makefile and
// hack/release.sh). Without ldflags it falls back to what the Go toolchain
// recorded in the binary.
package version

import (
	"runtime"
	"runtime/debug"
)

var (
	gitVersion = "v0.0.0-dev"
	gitCommit  = ""
	buildDate  = ""
)

// Info is the client's version.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit,omitempty"`
	BuildDate string `json:"buildDate,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the version of this binary.
func Get() Info {
	info := Info{
		Version:   gitVersion,
		GitCommit: gitCommit,
		BuildDate: buildDate,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && info.GitCommit == "":
				info.GitCommit = s.Value
			case s.Key == "vcs.time" && info.BuildDate == "":
				info.BuildDate = s.Value
			}
		}
	}
	return info
}
