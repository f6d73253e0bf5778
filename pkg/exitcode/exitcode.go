package exitcode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// The process exit codes. See the package documentation.
const (
	CodeOK      = 0
	CodeFinding = 1
	CodeUsage   = 2
	CodeCluster = 3
)

// Error is an error with the exit code the process should end with.
type Error struct {
	Code int
	Err  error
	// Silent errors have already been reported (a finding printed as a table,
	// for example): main exits with Code and prints nothing more.
	Silent bool
}

func (e *Error) Error() string {
	if e.Err == nil {
		return "exit status " + strconv.Itoa(e.Code)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Usage marks err as bad usage or bad input (exit 2).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeUsage, Err: err}
}

// Usagef is Usage(fmt.Errorf(format, args...)).
func Usagef(format string, args ...any) error { return Usage(fmt.Errorf(format, args...)) }

// Cluster marks err as the cluster being unreachable or refusing (exit 3).
func Cluster(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: CodeCluster, Err: err}
}

// Findingf reports findings (exit 1). The message, if any, is printed to the
// error stream by main, after the command's report.
func Findingf(msg string) error {
	return &Error{Code: CodeFinding, Err: errors.New(msg)}
}

// SilentFinding ends the process with exit 1 without printing anything more:
// the report already said what was found.
func SilentFinding() error { return &Error{Code: CodeFinding, Silent: true} }

// IsSilent reports whether err was already reported to the user.
func IsSilent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Silent
}

// Code returns the exit code for err: CodeOK for nil, the code an Error carries,
// else a classification of well-known errors. Anything unclassified is a
// usage error, since a bug in the input is far likelier than a bug here.
func Code(err error) int {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if IsClusterError(err) {
		return CodeCluster
	}
	return CodeUsage
}

// IsClusterError reports whether err says the cluster could not be reached or
// refused the request: network errors, timeouts, authentication and
// authorization failures, server errors and throttling. A NotFound, an
// Invalid or a BadRequest is the user's input, not the cluster's fault.
func IsClusterError(err error) bool {
	if err == nil {
		return false
	}
	if meta.IsNoMatchError(err) {
		return false
	}
	switch {
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err), apierrors.IsInternalError(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err):
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	msg := err.Error()
	// Discovery and kubeconfig loading flatten some errors into strings.
	for _, s := range []string{"connection refused", "no such host", "i/o timeout", "tls: ", "x509: ", "the server has asked for the client to provide credentials"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
