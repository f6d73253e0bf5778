package conflicts

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// TestMatchObjectReadsTypesAsKubectl: --object takes a type as kubectl
// does (short name, singular, kind, .group), matched against the audit
// events' group and plural resource.
func TestMatchObjectReadsTypesAsKubectl(t *testing.T) {
	web := ObjectKey{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}
	tests := []struct {
		want ObjectKey
		ok   bool
	}{
		{ObjectKey{Resource: "deploy", Name: "web"}, true},
		{ObjectKey{Resource: "deployment", Namespace: "shop", Name: "web"}, true},
		{ObjectKey{Resource: "deployments.apps", Name: "web"}, true},
		{ObjectKey{Resource: "deployments", Namespace: "other", Name: "web"}, false},
		{ObjectKey{Resource: "ds", Name: "web"}, false},
		{ObjectKey{Resource: "deploy", Name: "api"}, false},
	}
	for _, tt := range tests {
		if got := matchObject(tt.want, web); got != tt.ok {
			t.Errorf("matchObject(%+v, deployments.apps/shop/web) = %v, want %v", tt.want, got, tt.ok)
		}
	}
}

// TestResourcesFilterKeepsOnlyTheirObjects: --resource narrows every
// figure to the objects of the types it keeps.
func TestResourcesFilterKeepsOnlyTheirObjects(t *testing.T) {
	events := []audit.Event{
		ev(0, "a/ma", "update", "configmaps/c", 409),
		ev(1, "b/mb", "update", "secrets/s", 200),
	}
	for _, tc := range []struct {
		patterns []string
		want     int // attempts
	}{{nil, 2}, {[]string{"cm"}, 1}, {[]string{"-configmaps"}, 1}, {[]string{"*.*", "-secrets", "-cm"}, 0}} {
		cfg := NewConfig()
		var err error
		if cfg.Resources, err = apitypes.ParseResourceFilter(tc.patterns); err != nil {
			t.Fatal(err)
		}
		if got := report(cfg, events...).Summary.Attempts; got != tc.want {
			t.Errorf("--resource %q: %d attempts, want %d", tc.patterns, got, tc.want)
		}
	}
}

// findReader and findWriter answer as the generic binary search they
// replace (written out: a generic search over both, by a method, took 2.3
// times as long in a benchmark).
func TestFindReaderMatchesBinarySearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var o objState
		for r := uint32(0); r < 40; r++ {
			if rng.IntN(3) == 0 {
				o.lastRead = append(o.lastRead, readMark{reader: r})
			}
			if rng.IntN(3) == 0 {
				o.writers = append(o.writers, writerMark{wid: r})
			}
		}
		n := uint32(rng.IntN(42))
		wi, wok := slices.BinarySearchFunc(o.lastRead, n, func(m readMark, r uint32) int { return cmp.Compare(m.reader, r) })
		if i, ok := o.findReader(n); i != wi || ok != wok {
			t.Fatalf("reader %d in %v: %d %v, want %d %v", n, o.lastRead, i, ok, wi, wok)
		}
		wi, wok = slices.BinarySearchFunc(o.writers, n, func(m writerMark, w uint32) int { return cmp.Compare(m.wid, w) })
		if i, ok := o.findWriter(n); i != wi || ok != wok {
			t.Fatalf("writer %d in %v: %d %v, want %d %v", n, o.writers, i, ok, wi, wok)
		}
	}
}
