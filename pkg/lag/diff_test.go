package lag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	item := func(name string, st State, gen, obs int64) Item {
		return Item{Resource: "deployments.apps", Namespace: "shop", Name: name, State: st, Generation: i64(gen), ObservedGeneration: i64(obs), Lag: gen - obs, Finding: st != Current}
	}
	web2, api1 := item("web", Lagging, 7, 5), item("api", Lagging, 3, 2)
	web1, db := item("web", Lagging, 7, 6), item("db", NeverObserved, 1, 0)
	db.ObservedGeneration, db.Lag = nil, 0
	apiCaughtUp := api1
	apiCaughtUp.State, apiCaughtUp.Lag, apiCaughtUp.Finding, apiCaughtUp.ObservedGeneration = Current, 0, false, api1.Generation
	aged := web2
	aged.AgeSeconds += 30

	tests := []struct {
		name      string
		prev, cur []Item
		want      []Item
	}{
		{"nothing before: every item is new", nil, []Item{api1, web2}, []Item{api1, web2}},
		{"an older age alone is no change", []Item{web2}, []Item{aged}, nil},
		{"changed, new and caught up", []Item{api1, web2}, []Item{db, web1}, []Item{db, web1, apiCaughtUp}},
		{"everything caught up", []Item{api1}, nil, []Item{apiCaughtUp}},
		{"a condition more is a change", []Item{web1}, []Item{withCondition(web1)}, []Item{withCondition(web1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, Diff(tt.prev, tt.cur), cmp.AllowUnexported(Item{})); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

func withCondition(it Item) Item {
	it.LaggingConditions = []Condition{{Type: "Available", ObservedGeneration: 5}}
	return it
}
