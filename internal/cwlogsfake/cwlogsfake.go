// Package cwlogsfake is a local HTTP server that speaks CloudWatch Logs'
// JSON protocol (awsJson1.1: POST /, X-Amz-Target
// Logs_20140328.FilterLogEvents) over a log group given as a function, for
// tests of kubectl rv conflicts --source cloudwatch:. It applies the
// request's log stream prefix, time window and filter pattern, and counts
// what it sends.
//
// The filter pattern is read as pkg/audit/cloudwatch.FilterPattern writes
// it, a conjunction of disjunctions of ($.FIELD = "VALUE") terms: for each
// field named, the event's value must be one of the values given for it.
//
// Only tests import it.
package cwlogsfake

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
)

// Event is one log event of the group.
type Event struct {
	Stream string
	// Timestamp is in milliseconds since the epoch.
	Timestamp int64
	Message   string
	// Fields are the JSON fields the filter pattern may name.
	Fields map[string]string
}

// Server serves one log group.
type Server struct {
	// Group is the log group's name; another is ResourceNotFoundException.
	Group string
	// N is how many indexes the group has; Events(i) are the events at
	// index i (a formula, so that a group of millions takes no memory).
	N      int
	Events func(i int) []Event
	// PageEvents is the most events a page holds; ScanLimit the most
	// indexes a page looks at, after which the page ends with a
	// nextToken, even empty, as the service ends a page after a while.
	PageEvents, ScanLimit int

	// mu guards the fields below.
	mu       sync.Mutex
	requests []cloudwatchlogs.FilterLogEventsInput
	sent     int
	// retried counts the requests the SDK sent again (its
	// amz-sdk-request header says attempt=2 or more), and resent the
	// events they were answered with.
	retried, resent int
}

// Retried counts the requests the SDK's retryer sent again, and the
// events the server sent in answer to them (counted in Sent too).
func (s *Server) Retried() (requests, events int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retried, s.resent
}

// retry reports whether r is the SDK's second or later attempt at a
// request (amz-sdk-request: attempt=N; max=M).
func retry(r *http.Request) bool {
	h := r.Header.Get("amz-sdk-request")
	for _, part := range strings.Split(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "attempt="); ok {
			n, err := strconv.Atoi(v)
			return err == nil && n > 1
		}
	}
	return false
}

// Requests are the FilterLogEvents requests received.
func (s *Server) Requests() []cloudwatchlogs.FilterLogEventsInput {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cloudwatchlogs.FilterLogEventsInput(nil), s.requests...)
}

// Sent counts the events sent.
func (s *Server) Sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

var term = regexp.MustCompile(`\(\$\.(\w+) = "([^"]*)"\)`)

func matcher(pattern string) func(fields map[string]string) bool {
	want := map[string]map[string]bool{}
	for _, m := range term.FindAllStringSubmatch(pattern, -1) {
		if want[m[1]] == nil {
			want[m[1]] = map[string]bool{}
		}
		want[m[1]][m[2]] = true
	}
	return func(fields map[string]string) bool {
		for f, vals := range want {
			if !vals[fields[f]] {
				return false
			}
		}
		return true
	}
}

type wireEvent struct {
	LogStreamName string `json:"logStreamName"`
	Timestamp     int64  `json:"timestamp"`
	Message       string `json:"message"`
	IngestionTime int64  `json:"ingestionTime"`
	EventID       string `json:"eventId"`
}

func fail(w http.ResponseWriter, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	b, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	_, _ = w.Write(b)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "Logs_20140328.FilterLogEvents" || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		fail(w, "UnknownOperationException", "only FilterLogEvents")
		return
	}
	var in cloudwatchlogs.FilterLogEventsInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, "SerializationException", err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, in)
	s.mu.Unlock()
	if aws.ToString(in.LogGroupName) != s.Group {
		fail(w, "ResourceNotFoundException", "The specified log group does not exist.")
		return
	}
	out := struct {
		Events    []wireEvent `json:"events"`
		NextToken string      `json:"nextToken,omitempty"`
	}{Events: []wireEvent{}}
	match := matcher(aws.ToString(in.FilterPattern))
	from, _ := strconv.Atoi(aws.ToString(in.NextToken))
	i := from
	for ; i < from+s.ScanLimit && i < s.N && len(out.Events) < s.PageEvents; i++ {
		for _, e := range s.Events(i) {
			if in.StartTime != nil && e.Timestamp < *in.StartTime || in.EndTime != nil && e.Timestamp > *in.EndTime ||
				!strings.HasPrefix(e.Stream, aws.ToString(in.LogStreamNamePrefix)) || !match(e.Fields) {
				continue
			}
			out.Events = append(out.Events, wireEvent{e.Stream, e.Timestamp, e.Message, e.Timestamp + 900, strconv.Itoa(i)})
		}
	}
	if i < s.N {
		out.NextToken = strconv.Itoa(i)
	}
	s.mu.Lock()
	s.sent += len(out.Events)
	if retry(r) {
		s.retried++
		s.resent += len(out.Events)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}
