package cloudwatch

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cwlogsfake"
	"github.com/kubectl-rv/kubectl-rv/internal/hostile"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// patient is the timeout of the tests that are not about the bounds: the
// local server builds a page of a big log slowly under -race on a busy
// machine (TestSourceBounds tests the bounds).
const patient = 10 * time.Minute

// group is a log group of n audit events that exists only as a formula:
// event i is received at base + i ms; one in ten is a write (update,
// patch, create, delete in turn), the others are gets, lists and watches;
// one write in seven is logged at stage RequestReceived as well as at
// ResponseComplete (an API server without omitStages), so the filter has
// stages to drop too.
type group struct {
	n    int
	base time.Time
}

// fields are the verb and stage of the log's event at index j: each
// request i takes one index, and a write logged twice two (RequestReceived
// first).
func (g group) fields(i int, second bool) (verb, stage string) {
	if i%10 != 0 {
		return []string{"get", "list", "watch", "get", "get"}[i%5], "ResponseComplete"
	}
	verb = []string{"update", "patch", "create", "delete"}[(i/10)%4]
	if (i/10)%7 == 0 && !second {
		return verb, "RequestReceived"
	}
	return verb, "ResponseComplete"
}

func (g group) message(i int, verb, stage string) string {
	code := 200
	if i%30 == 0 {
		code = 409
	}
	t := g.base.Add(time.Duration(i) * time.Millisecond).UTC().Format(time.RFC3339Nano)
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":%q,"requestURI":"/api/v1/namespaces/ns/configmaps/c%d","verb":%q,"user":{"username":"u%d"},"userAgent":"w/1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c%d","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`, i, stage, i%100, verb, i%13, i%100, code, t, t)
}

// server serves g through the local protocol server.
func server(g group, pageEvents, scanLimit int) *cwlogsfake.Server {
	return &cwlogsfake.Server{
		Group: "/aws/eks/demo/cluster", N: g.n, PageEvents: pageEvents, ScanLimit: scanLimit,
		Events: func(i int) []cwlogsfake.Event {
			ts := g.base.Add(time.Duration(i) * time.Millisecond).UnixMilli()
			logged := []bool{false}
			if i%10 == 0 && (i/10)%7 == 0 {
				logged = []bool{false, true}
			}
			var out []cwlogsfake.Event
			for _, second := range logged {
				verb, stage := g.fields(i, second)
				out = append(out, cwlogsfake.Event{Stream: StreamPrefix + "-0123456789abcdef", Timestamp: ts, Message: g.message(i, verb, stage), Fields: map[string]string{"verb": verb, "stage": stage}})
			}
			if i%1000 == 0 {
				// Another stream of the group: the prefix leaves it out.
				out = append(out, cwlogsfake.Event{Stream: "authenticator-0123", Timestamp: ts, Message: "time=x msg=access granted", Fields: map[string]string{"verb": "update", "stage": "ResponseComplete"}})
			}
			return out
		},
	}
}

func client(url string, cfg audit.SourceConfig) *cloudwatchlogs.Client {
	return cloudwatchlogs.New(cloudwatchlogs.Options{
		Region:       "eu-west-1",
		BaseEndpoint: aws.String(url),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		HTTPClient:   HTTPClient(cfg),
	})
}

// kept counts what the filter keeps of requests from to to (excluded): the
// completed writes.
func (g group) kept(from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		if i%10 == 0 {
			n++
		}
	}
	return n
}

// TestSourcePagesThroughAMillionEvents: a log group of a million events
// is read through pages with the filter pushed down: the service sends
// only the completed writes, every one of them, and the decoder gets
// exactly those.
func TestSourcePagesThroughAMillionEvents(t *testing.T) {
	g := group{n: 1_000_000, base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	srv := server(g, 10_000, 50_000)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var st Stats
	src := Source(context.Background(), client(ts.URL, audit.SourceConfig{Timeout: patient}), Config{LogGroup: "/aws/eks/demo/cluster"}, &st)
	writes, conflicts := 0, 0
	dst, err := audit.Decode(context.Background(), src, audit.Options{Workers: 2}, func(e *audit.Event) error {
		if e.Verb == "get" || e.Verb == "list" || e.Verb == "watch" {
			t.Fatalf("a %s was sent: the filter was not pushed down", e.Verb)
		}
		writes++
		if e.Code == 409 {
			conflicts++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := g.kept(0, g.n)
	retried, resent := srv.Retried()
	if writes != want || st.Events != want || srv.Sent()-resent != want || dst.OtherStages != 0 {
		t.Errorf("the filter keeps %d events: decoded %d, the source read %d, the server sent %d (%d again, in %d requests the SDK retried), other stages %d",
			want, writes, st.Events, srv.Sent(), resent, retried, dst.OtherStages)
	}
	if want409 := (g.n + 29) / 30; conflicts != want409 {
		t.Errorf("%d 409s, want %d", conflicts, want409)
	}
	if st.Pages < g.n/srv.ScanLimit || st.Pages != len(srv.Requests())-retried {
		t.Errorf("%d pages read, %d requests (%d retried by the SDK): want one per request and at least %d", st.Pages, len(srv.Requests()), retried, g.n/srv.ScanLimit)
	}
	first := srv.Requests()[0]
	if diff := cmp.Diff([]string{"/aws/eks/demo/cluster", StreamPrefix, FilterPattern(), ""}, []string{aws.ToString(first.LogGroupName), aws.ToString(first.LogStreamNamePrefix), aws.ToString(first.FilterPattern), aws.ToString(first.NextToken)}); diff != "" {
		t.Errorf("the first request (-want +got):\n%s", diff)
	}
	t.Logf("%d events in the group, %d kept, %d pages", g.n, want, st.Pages)
}

// TestSourceWindow: --since and --until are pushed down as the request's
// times (until widened by UntilSlack).
func TestSourceWindow(t *testing.T) {
	g := group{n: 200_000, base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	srv := server(g, 1000, 20_000)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	since, until := g.base.Add(30*time.Second), g.base.Add(50*time.Second)
	var st Stats
	src := Source(context.Background(), client(ts.URL, audit.SourceConfig{Timeout: patient}), Config{LogGroup: "/aws/eks/demo/cluster", SourceConfig: audit.SourceConfig{Since: since, Until: until}}, &st)
	if _, err := audit.Decode(context.Background(), src, audit.Options{}, func(*audit.Event) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if aws.ToInt64(r.StartTime) != since.UnixMilli() || aws.ToInt64(r.EndTime) != until.Add(UntilSlack).UnixMilli() {
		t.Errorf("start %d end %d, want %d and %d", aws.ToInt64(r.StartTime), aws.ToInt64(r.EndTime), since.UnixMilli(), until.Add(UntilSlack).UnixMilli())
	}
	if want := g.kept(30_000, min(g.n, 50_000+int(UntilSlack/time.Millisecond)+1)); st.Events != want {
		t.Errorf("%d events read, the window holds %d", st.Events, want)
	}
}

// TestSourceServiceError: the service's refusal ends the source as the
// service's error (exit 3), naming the operation.
func TestSourceServiceError(t *testing.T) {
	ts := httptest.NewServer(server(group{n: 10}, 10, 10))
	defer ts.Close()
	src := Source(context.Background(), client(ts.URL, audit.SourceConfig{Timeout: patient}), Config{LogGroup: "/aws/eks/absent/cluster"}, nil)
	_, err := audit.Decode(context.Background(), src, audit.Options{}, func(*audit.Event) error { return nil })
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !regexp.MustCompile(`cloudwatch:/aws/eks/absent/cluster: .*FilterLogEvents.*ResourceNotFoundException`).MatchString(err.Error()) {
		t.Errorf("error %v (exit %d), want the service's, exit 3", err, exitcode.Classify(err))
	}
}

// TestSourceBounds: the service's answers are held to the bounds
// (pkg/audit/bounded) through the SDK's HTTP client, and the SDK's
// retryer does not send a request a bound cut off again: an endless or
// 2 GB FilterLogEvents answer, one that trickles or never comes, one
// not JSON, and a read cancelled mid-answer (hostile.Check).
func TestSourceBounds(t *testing.T) {
	const group = "/aws/eks/demo/cluster"
	hostile.Check(t, hostile.Reader{
		Serve: func(page http.Handler) http.Handler { return page },
		Read: func(ctx context.Context, url string, cfg audit.SourceConfig) error {
			src := Source(ctx, client(url, cfg), Config{LogGroup: group, SourceConfig: cfg}, nil)
			_, err := audit.Decode(ctx, src, audit.Options{}, func(*audit.Event) error { return nil })
			return err
		},
		Prefix:  `{"events":[`,
		Item:    `{"logStreamName":"kube-apiserver-audit-0","timestamp":1,"message":"{}","eventId":"1"},`,
		Name:    func(string) string { return "cloudwatch:" + group + ": FilterLogEvents: " },
		Garbage: "FilterLogEvents: operation error CloudWatch Logs: FilterLogEvents, https response error StatusCode: 200, RequestID: , deserialization failed",
	})
}

// TestSourcePageSize: a page size is each request's Limit, at most the
// service's 10,000.
func TestSourcePageSize(t *testing.T) {
	g := group{n: 10_000, base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	for size, want := range map[int]int32{0: 0, 100: 100, 50_000: MaxPageSize} {
		srv := server(g, 10_000, 10_000)
		ts := httptest.NewServer(srv)
		cfg := audit.SourceConfig{PageSize: size, Timeout: patient}
		src := Source(context.Background(), client(ts.URL, cfg), Config{LogGroup: "/aws/eks/demo/cluster", SourceConfig: cfg}, nil)
		_, err := audit.Decode(context.Background(), src, audit.Options{}, func(*audit.Event) error { return nil })
		ts.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToInt32(srv.Requests()[0].Limit); got != want {
			t.Errorf("page size %d: Limit %d, want %d", size, got, want)
		}
	}
}

// awsEnv points the SDK's default chain at url with static credentials,
// trusting the PEM file ca (AWS_CA_BUNDLE), and nothing else.
func awsEnv(t *testing.T, url, ca string) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": url, "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_CA_BUNDLE": ca,
	} {
		t.Setenv(k, v)
	}
}

// TestOpenWith: the client of the SDK's default chain (Open) reads
// over TLS trusting AWS_CA_BUNDLE, and holds the service to the bounds.
func TestOpenWith(t *testing.T) {
	g := group{n: 1000, base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	var silent atomic.Bool
	srv := server(g, 100, 1000)
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if silent.Load() {
			hostile.Silent(w, r)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	awsEnv(t, ts.URL, ca)
	// The idle bound is short for the silent server only: the served
	// read, over TLS under -race on a busy machine, may pause longer.
	timeout := audit.DefaultSourceTimeout
	read := func() error {
		src, err := Open(context.Background(), "/aws/eks/demo/cluster", audit.SourceConfig{Timeout: timeout})
		if err != nil {
			return err
		}
		_, err = audit.Decode(context.Background(), src, audit.Options{}, func(*audit.Event) error { return nil })
		return err
	}
	if err := read(); err != nil || srv.Sent() != g.kept(0, g.n) {
		t.Fatalf("%v, %d events sent: want the group's %d writes over TLS", err, srv.Sent(), g.kept(0, g.n))
	}
	silent.Store(true)
	timeout = 300 * time.Millisecond
	if err := read(); !errors.Is(err, bounded.ErrIdle) {
		t.Errorf("%v, want the idle bound's error", err)
	}
}
