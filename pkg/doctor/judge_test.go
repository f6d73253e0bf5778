package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/metadata"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

var eventsType = apitypes.Type{Resource: schema.GroupVersionResource{Version: "v1", Resource: "events"}, Kind: "Event", Namespaced: true}

// TestStorageServedWatch: Events are watched from the store's compact
// revision; a store that replays what it holds passes, one whose watch
// answers kine's 500 after compaction fails with the server's words.
func TestStorageServedWatch(t *testing.T) {
	s := newStore(7)
	if got := statusesOf(t, s, eventsType)[WatchStorageCompacted]; got != Pass {
		t.Errorf("a store that replays from its compact revision: %s = %s, want pass", WatchStorageCompacted, got)
	}
	if _, ok := statuses(t, newStore(7))[WatchStorageCompacted]; ok {
		t.Errorf("a cached type got %s without --check asking for it", WatchStorageCompacted)
	}
	s = newStore(7)
	s.storageWatchErr = apierrors.NewInternalError(errors.New("etcd event received with PrevKv=nil (key=\"/registry/events/ns/e1\", modRevision=420, type=PUT)"))
	cfg := NewConfig()
	cfg.Checks = []string{WatchStorageCompacted}
	rep, err := Run(context.Background(), Clients{Metadata: client{s}}, []apitypes.Type{eventsType}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Resources[0].Checks[0]
	if c.Status != Fail || !strings.Contains(c.Observed, "PrevKv=nil") || c.Values["from"] != "300" || c.Values["code"] != "500" {
		t.Errorf("kine's 500: %+v, want a fail from the compact revision 300 naming PrevKv=nil", c)
	}
}

// TestStorageWatchRacesCompaction: a store that compacts past its compact
// revision between doctor's lists and its watch answers that watch 410,
// as the contract says. doctor finds the new compact revision and watches
// again; a store that compacts past the list doctor started from is
// searched from a list made then; a store that compacts before every
// attempt is skipped, not failed; a 410 from a revision still readable is
// a failure.
func TestStorageWatchRacesCompaction(t *testing.T) {
	run := func(s *store) Check {
		t.Helper()
		cfg := NewConfig()
		cfg.Checks = []string{WatchStorageCompacted}
		rep, err := Run(context.Background(), Clients{Metadata: client{s}}, []apitypes.Type{eventsType}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Resources[0].Checks[0]
	}
	s := newStore(7)
	s.compactBeforeWatches = storageWatchAttempts - 1
	if c := run(s); c.Status != Pass || c.Values["from"] != "302" {
		t.Errorf("compacted before %d watches: %+v, want a pass from the compact revision 302", storageWatchAttempts-1, c)
	}
	s = newStore(7)
	s.compactBeforeWatches = storageWatchAttempts
	if c := run(s); c.Status != Skip || c.Values["attempts"] != strconv.Itoa(storageWatchAttempts) || !strings.Contains(c.Observed, "compacted past its compact revision") {
		t.Errorf("compacted before every watch: %+v, want a skip after %d attempts", c, storageWatchAttempts)
	}
	// The store compacts past the consistent list the other checks start
	// from while they run: every version the search could find from that
	// list is gone, and only a list of the check's own finds the store's.
	s = newStore(7)
	s.compactPastAfterLists = 1
	if c := run(s); c.Status != Pass || c.Values["from"] != "505" {
		t.Errorf("compacted past the first list: %+v, want a pass from the compact revision 505", c)
	}
	s = newStore(7)
	s.storageWatchErr = apierrors.NewResourceExpired("too old resource version: 300 (300)")
	if c := run(s); c.Status != Fail || c.Values["code"] != "410" || c.Values["from"] != "300" {
		t.Errorf("a 410 from a revision still readable: %+v, want a fail", c)
	}
}

func TestJudgeBookmarks(t *testing.T) {
	ev := func(rv string) seenEvent { return seenEvent{typ: watch.Modified, rv: rv, name: "ns/a"} }
	tests := []struct {
		name    string
		w       watched
		newest  string
		storage bool
		want    Status
		says    string
	}{
		{"bookmark", watched{from: "9", bookmark: &seenEvent{typ: watch.Bookmark, rv: "10"}}, "10", false, Pass, "first BOOKMARK"},
		{"replayed own latest write, nothing newer", watched{from: "9", events: []seenEvent{ev("10")}}, "10", false, Skip, "none was owed"},
		{"newer version existed", watched{from: "9"}, "10", false, Warn, "although resourceVersion 10 was newer"},
		{"events have no watch cache", watched{from: "9"}, "12", true, Warn, "Events (core/v1 and events.k8s.io)"},
		{"stalled", watched{from: "9", stalled: true}, "", false, Warn, "unreachable"},
		{"error", watched{from: "9", err: apierrors.NewInternalError(errors.New("boom"))}, "10", false, Fail, "ended with an error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := judgeBookmarks(&tc.w, tc.newest, tc.storage)
			if got.Status != tc.want || !strings.Contains(got.Observed, tc.says) {
				t.Errorf("got %s %q, want %s saying %q", got.Status, got.Observed, tc.want, tc.says)
			}
		})
	}
}

func TestJudgeWatchExpired(t *testing.T) {
	obj := func(name, rv, uid string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv, UID: types.UID(uid)}}
	}
	gone := listed{err: apierrors.NewResourceExpired("too old")}
	now := func(items ...metav1.PartialObjectMetadata) listed {
		return listed{list: &metav1.PartialObjectMetadataList{Items: items}}
	}
	added := func(name, rv string) seenEvent { return seenEvent{typ: watch.Added, name: "ns/" + name, rv: rv} }
	tests := []struct {
		name string
		in   expiredWatch
		want Status
		says string
	}{
		{"410", expiredWatch{watch: &watched{from: "1", err: apierrors.NewResourceExpired("too old resource version: 1 (300)")}, compacted: gone}, Pass, "410"},
		{"empty type closes cleanly (aged API server)", expiredWatch{watch: &watched{from: "1"}, compacted: gone}, Skip, "holds no objects"},
		{"every object replayed", expiredWatch{watch: &watched{from: "1", events: []seenEvent{added("a", "5"), added("b", "6")}}, compacted: gone,
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1"), obj("b", "6", "u2")}}, Pass, "nothing lost"},
		{"objects never arrive", expiredWatch{watch: &watched{from: "1"}, compacted: gone,
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1")}, still: now(obj("a", "5", "u1"))}, Fail, "1 of 1 listed objects never arrived"},
		{"deleted since the list", expiredWatch{watch: &watched{from: "1", events: []seenEvent{added("b", "6")}}, compacted: gone,
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1"), obj("b", "6", "u2")}, still: now(obj("b", "6", "u2"))}, Pass, "nothing lost"},
		{"an earlier incarnation's delete replayed first", expiredWatch{watch: &watched{from: "1", events: []seenEvent{added("a", "3"), {typ: watch.Deleted, name: "ns/a", rv: "4"}, added("a", "5")}}, compacted: gone,
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u2")}}, Pass, "nothing lost"},
		{"recreated since the list", expiredWatch{watch: &watched{from: "1"}, compacted: gone,
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1")}, still: now(obj("a", "9", "u9"))}, Pass, "nothing lost"},
		{"never compacted", expiredWatch{watch: &watched{from: "1", events: []seenEvent{added("a", "5")}}, compacted: listed{list: &metav1.PartialObjectMetadataList{}}}, Skip, "nothing has expired"},
		{"stalled storage", expiredWatch{watch: &watched{from: "1", stalled: true}, compacted: gone, listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1")}}, Warn, "unreachable"},
		{"exact list timed out", expiredWatch{watch: &watched{from: "1"}, compacted: listed{err: apierrors.NewServerTimeout(schema.GroupResource{Resource: "configmaps"}, "list", 1)},
			listed: []metav1.PartialObjectMetadata{obj("a", "5", "u1")}}, Warn, "unreachable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := judgeWatchExpired(tc.in)
			if got.Status != tc.want || !strings.Contains(got.Observed, tc.says) {
				t.Errorf("got %s %q, want %s saying %q", got.Status, got.Observed, tc.want, tc.says)
			}
		})
	}
}

func TestJudgeEventRVs(t *testing.T) {
	e := func(rv string) seenEvent { return seenEvent{typ: watch.Modified, rv: rv, name: "ns/a"} }
	tests := []struct {
		name    string
		watches []*watched
		want    Status
	}{
		{"in order", []*watched{{from: "1", events: []seenEvent{e("5"), e("6")}}}, Pass},
		{"none", []*watched{{from: "1"}}, Skip},
		{"missing", []*watched{{from: "1", events: []seenEvent{e("5"), e("")}}}, Fail},
		{"backwards", []*watched{{from: "1", events: []seenEvent{e("6"), e("5")}}}, Fail},
		{"initial events in key order", []*watched{{initial: true, events: []seenEvent{e("6"), e("5")}}}, Pass},
		{"leading zero", []*watched{{from: "1", events: []seenEvent{e("05")}}}, Fail},
	}
	for _, tc := range tests {
		if got := judgeEventRVs(tc.watches); got.Status != tc.want {
			t.Errorf("%s: got %s %q, want %s", tc.name, got.Status, got.Observed, tc.want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.DeadlineExceeded, true},
		{&url.Error{Op: "Get", URL: "https://x", Err: errors.New("connection refused")}, true},
		{apierrors.NewTimeoutError("Too large resource version: 1000500, current: 500", 1), false},
		{apierrors.NewTimeoutError("request did not complete within 60s", 0), true},
		{apierrors.NewServerTimeout(gr, "list", 1), true},
		{apierrors.NewServiceUnavailable("storage is (re)initializing"), true},
		{apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{apierrors.NewInternalError(errors.New("etcd event received with PrevKv=nil")), false},
		{apierrors.NewResourceExpired("too old"), false},
		{apierrors.NewNotFound(gr, "x"), false},
		{fmt.Errorf("decoding: %w", errors.New("invalid character")), false},
	}
	for _, tc := range tests {
		if got := unreachable(tc.err); got != tc.want {
			t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCrossServer: a peer that shares the store passes; one whose
// consistent list answers an older version, or that answers "too large"
// for the main server's version, fails; one that does not answer warns.
func TestCrossServer(t *testing.T) {
	tests := []struct {
		name string
		peer func(main *store) *store
		want Status
		says string
	}{
		{"same store", func(m *store) *store { return m }, Pass, "each answers not-older-than"},
		{"peer behind", func(m *store) *store { p := newStore(7); p.rv = m.rv - 10; p.lagging = true; return p }, Fail, "reads the past"},
		{"main answers too large for the peer's version", func(m *store) *store { p := newStore(7); p.rv = m.rv + 10; return p }, Fail, "Too large resource version"},
		{"peer stalled", func(m *store) *store { p := newStore(7); p.stalled = true; return p }, Warn, "unreachable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newStore(7)
			cfg := NewConfig()
			cfg.Checks = []string{CrossServerRVs}
			peers := []Peer{{Server: "https://127.0.0.2:6443", Metadata: client{tc.peer(m)}}}
			rep, err := probe(context.Background(), client{m}, peers, []apitypes.Type{{Resource: gr.WithVersion("v1"), Kind: "Widget", Namespaced: true}}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Resources[0].Checks[0]
			if got.Status != tc.want || !strings.Contains(got.Observed, tc.says) {
				t.Errorf("got %s %q, want %s saying %q", got.Status, got.Observed, tc.want, tc.says)
			}
		})
	}
}

// TestServiceEndpoints reads the kubernetes Service's EndpointSlices: one
// endpoint is one API server (no peer, whatever its address), of several
// the others than the kubeconfig's server are peers.
func TestServiceEndpoints(t *testing.T) {
	slice := func(port int64, addrs ...string) runtime.Object {
		var eps []any
		for _, a := range addrs {
			eps = append(eps, map[string]any{"addresses": []any{a}})
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    map[string]any{"name": "kubernetes", "namespace": "default", "labels": map[string]any{"kubernetes.io/service-name": "kubernetes"}},
			"addressType": "IPv4", "endpoints": eps,
			"ports": []any{map[string]any{"name": "https", "port": port, "protocol": "TCP"}},
		}}
	}
	scheme := runtime.NewScheme()
	lists := map[schema.GroupVersionResource]string{endpointSlices: "EndpointSliceList"}
	for _, tc := range []struct {
		name  string
		slice runtime.Object
		self  string
		want  []string
	}{
		{"one server behind a forwarded port", slice(6443, "172.18.0.2"), "https://127.0.0.1:40123", nil},
		{"three servers, self among them", slice(6443, "10.0.0.12", "10.0.0.11", "10.0.0.13"), "https://10.0.0.11:6443", []string{"https://10.0.0.12:6443", "https://10.0.0.13:6443"}},
		{"three servers behind a load balancer", slice(443, "10.0.0.11", "10.0.0.12"), "https://k8s.example.com", []string{"https://10.0.0.11:443", "https://10.0.0.12:443"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, lists, tc.slice)
			got, err := ServiceEndpoints(context.Background(), c, tc.self)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("peers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFindPeers: Run's peers are --api-servers, or else the kubernetes
// Service's endpoints other than the kubeconfig's server, those that
// answer; the ones left out are warnings, a named server that cannot be
// given a client is bad input and none of the named answering the
// cluster's fault.
func TestFindPeers(t *testing.T) {
	slice := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
		"metadata":    map[string]any{"name": "kubernetes", "namespace": "default", "labels": map[string]any{"kubernetes.io/service-name": "kubernetes"}},
		"addressType": "IPv4", "endpoints": []any{map[string]any{"addresses": []any{"10.0.0.11"}}, map[string]any{"addresses": []any{"10.0.0.12"}}, map[string]any{"addresses": []any{"10.0.0.13"}}},
		"ports": []any{map[string]any{"name": "https", "port": int64(6443), "protocol": "TCP"}},
	}}
	down := newStore(1)
	down.stalled = true
	// Every server answers but 10.0.0.13 and https://down; "bad" gets no client.
	peer := func(server string) (metadata.Interface, error) {
		switch server {
		case "https://bad":
			return nil, errors.New("no client")
		case "https://10.0.0.13:6443", "https://down":
			return client{down}, nil
		}
		return client{newStore(1)}, nil
	}
	lists := map[schema.GroupVersionResource]string{endpointSlices: "EndpointSliceList"}
	refused := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	refused.PrependReactor("list", "endpointslices", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(endpointSlices.GroupResource(), "", errors.New("no"))
	})
	tests := []struct {
		name       string
		dynamic    dynamic.Interface
		peer       func(string) (metadata.Interface, error)
		apiServers []string
		checks     []string
		want       []string
		warnings   string
		code       int
	}{
		{"the Service's endpoints but self, those that answer", nil, peer, nil, nil, []string{"https://10.0.0.12:6443"}, "the kubernetes Service lists 1 API server not reachable from here", 0},
		{"named, one not answering", nil, peer, []string{"https://127.0.0.2:6443", "https://down"}, nil, []string{"https://127.0.0.2:6443"}, "--api-servers https://down did not answer", 0},
		{"named, none answering", nil, peer, []string{"https://down"}, nil, nil, "", exitcode.CodeCluster},
		{"named, no client", nil, peer, []string{"https://bad"}, nil, nil, "", exitcode.CodeUsage},
		{"endpoints not readable", refused, peer, nil, nil, nil, "the kubernetes Service's endpoints could not be read", 0},
		{"cross-server-rvs not asked for", nil, peer, nil, []string{ListConsistent}, nil, "", 0},
		{"no way to reach another server", nil, nil, nil, nil, nil, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dyn := tc.dynamic
			if dyn == nil {
				dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, slice)
			}
			cfg := NewConfig()
			cfg.APIServers, cfg.Checks = tc.apiServers, tc.checks
			c := Clients{Dynamic: dyn, Server: "https://10.0.0.11:6443", Peer: tc.peer}
			peers, warnings, err := findPeers(context.Background(), c, cfg)
			if code := exitcode.Classify(err); code != tc.code {
				t.Fatalf("findPeers error %v: exit %d, want %d", err, code, tc.code)
			}
			var got []string
			for _, p := range peers {
				got = append(got, p.Server)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("peers (-want +got):\n%s", diff)
			}
			if w := strings.Join(warnings, "; "); tc.warnings == "" && w != "" || !strings.Contains(w, tc.warnings) {
				t.Errorf("warnings %q, want %q", w, tc.warnings)
			}
		})
	}
}

// TestAllArrived: a watch from 1 is read until every listed object has
// arrived at its listed version; a replayed DELETED of an earlier
// incarnation (two API servers on one host share an identity Lease, which
// each deletes and recreates) is not the listed object arriving.
func TestAllArrived(t *testing.T) {
	stop := allArrived([]metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "5"}}})
	var got []bool
	for _, e := range []seenEvent{{typ: watch.Added, name: "ns/a", rv: "3"}, {typ: watch.Deleted, name: "ns/a", rv: "4"}, {typ: watch.Added, name: "ns/a", rv: "5"}} {
		got = append(got, stop(e))
	}
	if diff := cmp.Diff([]bool{false, false, true}, got); diff != "" {
		t.Errorf("stop after each event (-want +got):\n%s", diff)
	}
}

// TestRunPreflightsTheWriteProbe: with WriteProbe, Run sends the dry-run
// create first and returns a PreflightError carrying the server's answer
// when the probe cannot run, before any other request.
func TestRunPreflightsTheWriteProbe(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))
	for _, tc := range []struct {
		name   string
		answer error
		want   error
	}{
		{"refused", forbidden, forbidden},
		{"no such namespace", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "demo"), ErrNoProbeNamespace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
			c.PrependReactor("create", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, tc.answer })
			cfg := NewConfig()
			cfg.WriteProbe = "demo"
			_, err := Run(context.Background(), Clients{Dynamic: c}, []apitypes.Type{eventsType}, cfg)
			var pe *PreflightError
			if !errors.As(err, &pe) || !errors.Is(err, tc.want) {
				t.Fatalf("Run = %v, want a PreflightError wrapping %v", err, tc.want)
			}
			if n := len(c.Actions()); n != 1 {
				t.Errorf("%d requests, want only the dry-run create: %v", n, c.Actions())
			}
		})
	}
}
