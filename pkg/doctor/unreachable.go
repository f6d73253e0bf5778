package doctor

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// unreachable reports whether err says the server or its storage did not
// answer in time (a transport error, a time-out, storage that is stopped or
// partitioned) rather than how the endpoint treats a request. Under the
// verdict rule that is no contract failure: a stalled backend loses no data
// a client could not get back by asking again, so checks say "unreachable"
// and warn instead of failing.
//
// A 504 "Too large resource version" is an answer, not a time-out: it is
// what list-future asks for.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	// Transport errors (client-go wraps them in *url.Error, a net.Error)
	// and connections cut mid-answer.
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	msg := err.Error()
	switch code := statusCode(err); {
	case code == 504 || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err):
		return !strings.Contains(msg, "Too large resource version")
	case code == 503 || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err):
		return true
	case code == 500:
		return storageStalled(msg)
	}
	return false
}

// storageStalled recognises the API server's words for storage that did
// not answer (etcd's client and the apiserver's storage layer).
func storageStalled(msg string) bool {
	for _, s := range []string{"request timed out", "context deadline exceeded", "deadline exceeded", "connection refused", "etcdserver: leader changed", "Unavailable"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// failUnlessUnreachable is fail, or a warn that says the server did not
// answer when err is a stall rather than an answer.
func failUnlessUnreachable(id string, err error, observed string, kv ...string) Check {
	if unreachable(err) {
		return warn(id, "unreachable: "+observed+" (a time-out or stalled storage, not a broken contract: ask again later)", append(kv, "unreachable", "true")...)
	}
	return fail(id, observed, kv...)
}
