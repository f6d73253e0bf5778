// Package auditgen is a log of audit events that exists only as a formula,
// so that tests of the log services' readers (--source) can serve
// millions of events without holding them: event i is received at Base +
// i ms; one in ten is a completed write (update, patch, create, delete in
// turn), one in seventy a write's RequestReceived stage, the others gets,
// lists and watches; one in thirty answered 409.
//
// Only tests import it.
package auditgen

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Log is a log of N events from Base.
type Log struct {
	N    int
	Base time.Time
}

// Event is event i: the fields a service's filter may name (verb, stage,
// requestReceivedTimestamp) and the line the API server wrote.
func (l Log) Event(i int) (fields map[string]string, line string) {
	verb, stage := []string{"get", "list", "watch", "get", "get"}[i%5], "ResponseComplete"
	switch {
	case i%70 == 1:
		verb, stage = "update", "RequestReceived"
	case i%10 == 0:
		verb = []string{"update", "patch", "create", "delete"}[(i/10)%4]
	}
	code := 200
	if i%30 == 0 {
		code = 409
	}
	t := l.Base.Add(time.Duration(i) * time.Millisecond).UTC().Format(time.RFC3339Nano)
	line = fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":%q,"requestURI":"/api/v1/namespaces/ns/configmaps/c%d","verb":%q,"user":{"username":"u%d"},"userAgent":"w/1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c%d","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`, i, stage, i%100, verb, i%13, i%100, code, t, t)
	return map[string]string{"verb": verb, "stage": stage, "requestReceivedTimestamp": t}, line
}

// Writes is how many completed writes the log holds: what a filter
// pushed down keeps.
func (l Log) Writes() int { return (l.N + 9) / 10 }

// Conflicts is how many of them were answered 409.
func (l Log) Conflicts() int { return (l.N + 29) / 30 }

// Count decodes src, failing t on a read (get, list or watch: a filter
// not pushed down), and counts its events and 409s.
func Count(t testing.TB, src audit.Source) (events, conflicts int, err error) {
	t.Helper()
	_, err = audit.Decode(context.Background(), src, audit.Options{Workers: 2}, func(e *audit.Event) error {
		if e.Verb == "get" || e.Verb == "list" || e.Verb == "watch" {
			t.Fatalf("a %s was sent: the filter was not pushed down", e.Verb)
		}
		events++
		if e.Code == 409 {
			conflicts++
		}
		return nil
	})
	return events, conflicts, err
}
