package exitcode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// The process exit codes. See the package documentation.
const (
	CodeOK          = 0
	CodeFinding     = 1
	CodeUsage       = 2
	CodeCluster     = 3
	CodeInterrupted = 130
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

// Findingf reports findings (exit 1) with the message fmt.Errorf(format,
// args...) would make. main prints it to the error stream after the
// command's report.
func Findingf(format string, args ...any) error {
	return &Error{Code: CodeFinding, Err: fmt.Errorf(format, args...)}
}

// SilentFinding ends the process with exit 1 without printing anything more:
// the report already said what was found.
func SilentFinding() error { return &Error{Code: CodeFinding, Silent: true} }

// IsSilent reports whether err was already reported to the user.
func IsSilent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Silent
}

// Classify returns the exit code for err, in this order:
//
//   - CodeOK for nil;
//   - CodeInterrupted when err is or wraps context.Canceled (Ctrl-C);
//   - the code an Error in err's chain carries (Usage, Cluster, Findingf);
//   - CodeUsage for command-line errors that carry no type (cobra's
//     "unknown command", "accepts 1 arg(s)", ...) and for an unknown
//     resource type;
//   - CodeCluster when err says the cluster could not be reached or refused
//     the request (see below);
//   - CodeUsage for anything else.
//
// The last rule decides the unknown: an error that is neither marked nor
// recognised is the input's or a local file's far more often than the
// cluster's, and a script that sees 3 retries later, which fixes nothing
// local. Code that talks to the cluster marks what it knows to be the
// cluster's fault with Cluster.
//
// The cluster's errors are network errors (connection refused, DNS, TLS,
// timeouts, a url.Error from the client), and API status errors 401, 403,
// 408, 410 (the history asked for is compacted), 429 and every 5xx. Other
// statuses (400, 404, 409, 422, ...) say the request was wrong: the input.
func Classify(err error) int {
	if err == nil {
		return CodeOK
	}
	if errors.Is(err, context.Canceled) {
		return CodeInterrupted
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if isCommandLineError(err) || meta.IsNoMatchError(err) {
		return CodeUsage
	}
	if isClusterError(err) {
		return CodeCluster
	}
	return CodeUsage
}

// isCommandLineError recognises the argument errors cobra and pflag build
// with fmt.Errorf, which carry no type.
func isCommandLineError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument ", "flag needs an argument", "required flag(s)"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// isClusterError reports whether err says the cluster could not be reached
// or refused the request (see Classify).
func isClusterError(err error) bool {
	if isClusterStatus(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// A local file's error is never the cluster's. syscall.Errno has
	// Timeout and Temporary, so a bare one (inside an *fs.PathError, say)
	// passes for a net.Error: only one inside a network error counts.
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	var opErr *net.OpError
	var errno syscall.Errno
	if errors.As(err, &urlErr) || errors.As(err, &opErr) || errors.As(err, &netErr) && !errors.As(err, &errno) {
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

// isClusterStatus reports whether err is an API status the cluster answers
// when it refuses a request or cannot serve it.
func isClusterStatus(err error) bool {
	switch {
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err),
		apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err), apierrors.IsInternalError(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsUnexpectedServerError(err),
		apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return true
	}
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code >= 500
}
