package churn

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/diff"
)

// explainState follows one explained object: the last full version
// fetched, and the fields that changed between fetched versions.
type explainState struct {
	last     map[string]any
	lastRV   string
	inFlight bool
	samples  int
	fields   map[string]int
	// notTime is set once a changed value was not a timestamp.
	notTime bool
}

var explainDiffer = diff.New(diff.Options{Ignore: [][]string{
	{"metadata", "resourceVersion"},
	{"metadata", "managedFields"},
	{"metadata", "generation"},
}})

// pickExplain adds the busiest objects, up to Config.Explain of them, to
// the objects to explain; objects once picked stay picked, up to three
// times Config.Explain in all.
func (t *Tracker) pickExplain() {
	if t.cfg.Explain <= 0 || len(t.explain) >= 3*t.cfg.Explain {
		return
	}
	for _, k := range t.busiest(t.cfg.Explain) {
		if st := t.objects[k]; st.act.Writes >= 2 && !st.act.deleted && t.explain[k] == nil {
			t.explain[k] = &explainState{fields: map[string]int{}}
		}
	}
}

// busiest returns the n objects with the most writes, most first.
func (t *Tracker) busiest(n int) []objKey {
	var keys []objKey
	for k, st := range t.objects {
		if st.act != nil && st.act.Writes > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return t.less(keys[i], keys[j]) })
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// less orders objects by writes, most first, then by type, namespace and name.
func (t *Tracker) less(a, b objKey) bool {
	wa, wb := t.objects[a].act.Writes, t.objects[b].act.Writes
	if wa != wb {
		return wa > wb
	}
	if a.typ != b.typ {
		return t.types[a.typ].t.Name() < t.types[b.typ].t.Name()
	}
	if a.namespace != b.namespace {
		return a.namespace < b.namespace
	}
	return a.name < b.name
}

// wantsFetch reports whether the full object should be fetched after this
// write of k, and marks the fetch in flight.
func (t *Tracker) wantsFetch(k objKey) bool {
	x := t.explain[k]
	if x == nil || x.inFlight || x.samples >= t.cfg.ExplainSamples {
		return false
	}
	x.inFlight = true
	return true
}

// explained takes a fetched full object (nil when the fetch failed).
func (t *Tracker) explained(k objKey, u *unstructured.Unstructured) {
	x := t.explain[k]
	if x == nil {
		return
	}
	x.inFlight = false
	if u == nil || u.GetResourceVersion() == x.lastRV {
		return
	}
	if x.last != nil {
		x.samples++
		seen := map[string]bool{}
		for _, c := range explainDiffer.Objects(x.last, u.Object) {
			p := c.PathString()
			if !seen[p] {
				seen[p] = true
				x.fields[p]++
			}
			if !isTime(c.Old) || !isTime(c.New) {
				x.notTime = true
			}
		}
	}
	x.last, x.lastRV = u.Object, u.GetResourceVersion()
}

func isTime(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// explanation returns what was learned of k, or nil.
func (t *Tracker) explanation(k objKey) *Explanation {
	x := t.explain[k]
	if x == nil || x.samples == 0 {
		return nil
	}
	e := &Explanation{Samples: x.samples, Fields: []ChangedField{}}
	for p, n := range x.fields {
		e.Fields = append(e.Fields, ChangedField{Path: p, Samples: n})
	}
	sort.Slice(e.Fields, func(i, j int) bool {
		if e.Fields[i].Samples != e.Fields[j].Samples {
			return e.Fields[i].Samples > e.Fields[j].Samples
		}
		return e.Fields[i].Path < e.Fields[j].Path
	})
	e.TimestampOnly = len(e.Fields) > 0 && !x.notTime
	return e
}
