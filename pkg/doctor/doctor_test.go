package doctor

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// store answers lists and watches the way the API server's contract says,
// or breaks one rule on request. It stands in for the server in the unit
// tests of the judging logic; test/e2e holds the real thing.
type store struct {
	metadata.Getter // unused methods panic

	rv        uint64 // the newest revision
	compacted uint64 // revisions below this are gone
	items     []metav1.PartialObjectMetadata

	ignoreMatch    bool // treat every resourceVersion as NotOlderThan
	stripItemRVs   bool
	noInitialEnd   bool
	expiredWatchOK bool // answer a watch from a compacted version with nothing
	// storageWatchErr answers a watch from a readable version with this
	// error instead of its events (kine after compaction: 500 PrevKv=nil).
	storageWatchErr *apierrors.StatusError
	stripEventRVs   bool
	// compactBeforeWatches is how many watches from a readable version
	// find the store compacted past that version first (an API server's
	// compaction between doctor's lists and its watch).
	compactBeforeWatches int
	// compactPastAfterLists, when set, is how many lists are answered
	// before the store takes ten more writes and compacts past the
	// revision it had (an API server's compaction while doctor runs its
	// other checks after its consistent list).
	compactPastAfterLists int
	// lagging answers NotOlderThan lists past its newest version with its
	// newest instead of "too large" (a replica that reads the past).
	lagging bool
	// stalled answers every list with a server time-out.
	stalled        bool
	slowConsistent time.Duration
	// servedLists is how many lists are answered before the resource is
	// removed (every request then answers 404); 0 keeps it served.
	servedLists int
	lists       int
	// cacheBehindStreams is how many streaming lists answer "Too large
	// resource version" (a watch cache behind storage, as kine's under
	// load) before one is served.
	cacheBehindStreams int
}

func newStore(n int) *store {
	s := &store{rv: 500, compacted: 300}
	for i := range n {
		s.items = append(s.items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: fmt.Sprintf("o%d", i), ResourceVersion: strconv.Itoa(400 + i),
		}})
	}
	return s
}

func (s *store) Namespace(string) metadata.ResourceInterface { return s }

var gr = schema.GroupResource{Resource: "widgets"}

func (s *store) List(ctx context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	if s.removed() {
		return nil, apierrors.NewNotFound(gr, "")
	}
	s.lists++
	if s.lists == s.compactPastAfterLists+1 && s.compactPastAfterLists > 0 {
		s.compacted = s.rv + 5
		s.rv += 10
	}
	if s.stalled {
		return nil, apierrors.NewServerTimeout(gr, "list", 1)
	}
	at := s.rv
	if o.ResourceVersion != "" && o.ResourceVersion != "0" {
		asked, _ := strconv.ParseUint(o.ResourceVersion, 10, 64)
		exact := o.ResourceVersionMatch == metav1.ResourceVersionMatchExact && !s.ignoreMatch
		switch {
		case exact && asked < s.compacted:
			return nil, apierrors.NewResourceExpired("too old resource version")
		case exact:
			at = asked
		case asked > s.rv && s.lagging:
		case asked > s.rv:
			return nil, apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", asked, s.rv), 1)
		}
	}
	if o.ResourceVersion == "" && s.slowConsistent > 0 {
		time.Sleep(s.slowConsistent)
	}
	items := s.items
	start, _ := strconv.Atoi(o.Continue)
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(at, 10)}}
	items = items[start:]
	if o.Limit > 0 && int(o.Limit) < len(items) {
		items = items[:o.Limit]
		out.Continue = strconv.Itoa(start + int(o.Limit))
	}
	for _, it := range items {
		if s.stripItemRVs {
			it.ResourceVersion = ""
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

func (s *store) removed() bool { return s.servedLists > 0 && s.lists >= s.servedLists }

func (s *store) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	if s.removed() {
		return nil, apierrors.NewNotFound(gr, "")
	}
	ch := make(chan watch.Event, len(s.items)+2)
	asked, _ := strconv.ParseUint(o.ResourceVersion, 10, 64)
	if o.ResourceVersion != "" && asked >= s.compacted && s.compactBeforeWatches > 0 {
		s.compactBeforeWatches--
		s.compacted = asked + 1
	}
	switch {
	case o.SendInitialEvents != nil && *o.SendInitialEvents && s.cacheBehindStreams > 0:
		s.cacheBehindStreams--
		st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", s.rv, s.rv-1), 1).ErrStatus
		ch <- watch.Event{Type: watch.Error, Object: &st}
	case o.SendInitialEvents != nil && *o.SendInitialEvents:
		for i := range s.items {
			ch <- watch.Event{Type: watch.Added, Object: &s.items[i]}
		}
		if !s.noInitialEnd {
			ch <- watch.Event{Type: watch.Bookmark, Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: strconv.FormatUint(s.rv, 10), Annotations: map[string]string{InitialEventsEndAnnotation: "true"}}}}
		}
	case o.ResourceVersion != "" && asked < s.compacted:
		if !s.expiredWatchOK {
			st := apierrors.NewResourceExpired("too old resource version: 1 (300)").ErrStatus
			ch <- watch.Event{Type: watch.Error, Object: &st}
		}
	case s.storageWatchErr != nil:
		ch <- watch.Event{Type: watch.Error, Object: &s.storageWatchErr.ErrStatus}
	default:
		s.replay(ch, asked)
		if o.AllowWatchBookmarks {
			ch <- watch.Event{Type: watch.Bookmark, Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(s.rv, 10)}}}
		}
	}
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

// replay sends the items newer than asked, in resourceVersion order, as a
// watch from asked delivers them.
func (s *store) replay(ch chan<- watch.Event, asked uint64) {
	for i := range s.items {
		it := s.items[i]
		if rv, _ := strconv.ParseUint(it.ResourceVersion, 10, 64); rv <= asked {
			continue
		}
		if s.stripEventRVs {
			it.ResourceVersion = ""
		}
		ch <- watch.Event{Type: watch.Added, Object: &it}
	}
}

type client struct{ s *store }

func (c client) Resource(schema.GroupVersionResource) metadata.Getter { return c.s }

func statuses(t *testing.T, s *store) map[string]Status {
	t.Helper()
	return statusesOf(t, s, apitypes.Type{Resource: gr.WithVersion("v1"), Kind: "Widget", Namespaced: true})
}

func statusesOf(t *testing.T, s *store, typ apitypes.Type) map[string]Status {
	t.Helper()
	cfg := NewConfig()
	cfg.LatencySamples = 1
	cfg.SlowConsistentList = 50 * time.Millisecond
	rep, err := Run(context.Background(), Clients{Metadata: client{s}}, []apitypes.Type{typ}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Status{}
	for _, c := range rep.Resources[0].Checks {
		got[c.ID] = c.Status
	}
	return got
}

// allPass is every check a cached type without peers gets, passed.
func allPass() map[string]Status {
	m := map[string]Status{}
	for _, c := range Checks {
		switch c.ID {
		case WriteRVsIncreasing, WatchStorageCompacted, CrossServerRVs:
		default:
			m[c.ID] = Pass
		}
	}
	return m
}

// TestEachFaultFailsExactlyItsCheck holds every check to the contract: a
// store that keeps it passes them all, and each broken rule turns exactly
// the one check that holds it to fail.
func TestEachFaultFailsExactlyItsCheck(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(*store)
		fails  string
	}{
		{"healthy", func(*store) {}, ""},
		{"ignores resourceVersionMatch", func(s *store) { s.ignoreMatch = true }, ListExact},
		{"strips item resourceVersions", func(s *store) { s.stripItemRVs = true }, ItemsHaveRV},
		{"no initial-events-end bookmark", func(s *store) { s.noInitialEnd = true }, InitialEventsEnd},
		{"compacted watch answers 200", func(s *store) { s.expiredWatchOK = true }, WatchExpired},
		{"slow consistent lists", func(s *store) { s.slowConsistent = 80 * time.Millisecond }, ConsistentLatency},
		{"watch events without resourceVersions", func(s *store) { s.stripEventRVs = true; s.compacted = 1 }, WatchEventsHaveRV},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(7)
			tc.break_(s)
			want := allPass()
			if tc.fails != "" {
				want[tc.fails] = Fail
			}
			switch tc.fails {
			case ListExact:
				// Exact at 1 is then answered with the newest list: there is
				// no 410 to see, and doctor says it cannot tell.
				want[ListExactExpired] = Skip
			case ItemsHaveRV:
				// Nothing is left to compare the list's version with.
				want[ListCoversItems] = Skip
			case WatchEventsHaveRV:
				// Nothing was compacted, so nothing can expire (the replay
				// that reaches back to 1 is what carries the events).
				want[ListExactExpired], want[WatchExpired] = Skip, Skip
			}
			if diff := cmp.Diff(want, statuses(t, s)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRemovedDuringTheRunIsNotAFailure: a resource that starts answering 404
// after its first lists (a custom resource definition deleted meanwhile) is
// reported as gone, not as failed checks; a failure of a resource still
// served stays a failure.
func TestRemovedDuringTheRunIsNotAFailure(t *testing.T) {
	for _, served := range []int{1, 3} {
		s := newStore(7)
		s.servedLists = served
		rep, err := Run(context.Background(), Clients{Metadata: client{s}}, []apitypes.Type{{Resource: gr.WithVersion("v1"), Kind: "Widget", Namespaced: true}}, NewConfig())
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Resources[0]
		if !r.Gone || len(r.Checks) != 0 || !strings.Contains(r.Warning, "removed during the run") {
			t.Errorf("served %d lists: resource = %+v, want gone with a warning and no checks", served, r)
		}
		if want := (Summary{Resources: 1, Gone: 1}); rep.Summary != want {
			t.Errorf("served %d lists: summary = %+v, want %+v", served, rep.Summary, want)
		}
	}
	s := newStore(7)
	s.ignoreMatch = true
	if got := statuses(t, s)[ListExact]; got != Fail {
		t.Errorf("a served resource that breaks a rule: %s = %s, want fail", ListExact, got)
	}
}

func TestFewItemsSkipPaging(t *testing.T) {
	got := statuses(t, newStore(1))
	if got[Paging] != Skip {
		t.Errorf("paging with one item = %s, want skip", got[Paging])
	}
}

func TestJudges(t *testing.T) {
	list := func(rv string, items ...string) *metav1.PartialObjectMetadataList {
		l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
		for i, it := range items {
			l.Items = append(l.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "o" + strconv.Itoa(i), ResourceVersion: it}})
		}
		return l
	}
	tests := []struct {
		name string
		got  Check
		want Status
	}{
		{"item newer than list", judgeCoversItems(list("10", "9", "11")), Fail},
		{"items older", judgeCoversItems(list("10", "9", "10")), Pass},
		{"no item rv", judgeCoversItems(list("10", "")), Skip},
		{"leading zero", judgeComparable(list("10", "09")), Fail},
		{"not a number", judgeComparable(list("abc")), Fail},
		{"integers", judgeComparable(list("10", "9", "1")), Pass},
		{"writes increase", judgeWrites([]string{"5", "6", "7"}, []string{"MODIFIED@6", "MODIFIED@7", "DELETED@8"}), Pass},
		{"writes go back", judgeWrites([]string{"5", "7", "6"}, []string{"MODIFIED@7", "MODIFIED@6", "DELETED@8"}), Fail},
		{"watch out of order", judgeWrites([]string{"5", "6", "7"}, []string{"MODIFIED@7", "MODIFIED@6", "DELETED@8"}), Fail},
		{"delete before update", judgeWrites([]string{"5", "6", "7"}, []string{"MODIFIED@6", "MODIFIED@7", "DELETED@7"}), Fail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got.Status != tc.want {
				t.Errorf("status = %s (%s), want %s", tc.got.Status, tc.got.Observed, tc.want)
			}
		})
	}
}

func TestEveryCheckIsDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks {
		if c.Contract == "" || c.Breaks == "" || seen[c.ID] {
			t.Errorf("check %q: contract, breaks and a unique id are required", c.ID)
		}
		seen[c.ID] = true
	}
}

// TestFirstAnswersKeepsRetriesOf429 checks which answers lose Retry-After:
// a 504 (the future-version answer doctor checks) does, a 429 (a cache
// still initializing) does not, so that client-go retries it.
func TestFirstAnswersKeepsRetriesOf429(t *testing.T) {
	for _, tc := range []struct {
		code int
		kept bool
	}{{504, false}, {429, true}, {503, true}} {
		rt := noRetryAfter{roundTrip(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: tc.code, Header: http.Header{"Retry-After": {"1"}}}, nil
		})}
		resp, _ := rt.RoundTrip(&http.Request{})
		if got := resp.Header.Get("Retry-After") != ""; got != tc.kept {
			t.Errorf("%d: Retry-After kept = %v, want %v", tc.code, got, tc.kept)
		}
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestStreamingListWhileTheCacheIsBehind: a streaming list answered "Too
// large resource version" (the watch cache behind storage, as kine's under
// load) is opened again; two such answers, then a served one, pass; a
// cache that stays behind is a warning, not a failure of the check.
func TestStreamingListWhileTheCacheIsBehind(t *testing.T) {
	for _, tc := range []struct {
		behind int
		want   Status
	}{{0, Pass}, {streamTries - 1, Pass}, {streamTries, Warn}} {
		s := newStore(7)
		s.cacheBehindStreams = tc.behind
		if got := statuses(t, s)[InitialEventsEnd]; got != tc.want {
			t.Errorf("%d answers of too large resource version: %s, want %s", tc.behind, got, tc.want)
		}
	}
}
