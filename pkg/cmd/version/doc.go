// Package version is kubectl rv version: the client's build (pkg/version)
// and the server's version.
package version
