package lag

import (
	"context"
	"encoding/json"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Follow keeps rep up to date by watching every scanned type from the
// resourceVersion of its list: no polling, one watch per type. After each
// change it calls onChange (when set) with the updated report; an error from
// onChange (a failed print) ends Follow with that error. It returns nil as
// soon as nothing counts as a finding when untilClear is set, else when ctx
// ends (returning ctx's error). A watch that expires (410) relists its
// type and resumes; a type that may not be watched (403) keeps its last
// state and adds a warning.
//
// Memory stays bounded by the objects the report shows: for the others only
// counts are kept, so an object that was current and is deleted is assumed
// to have been current.
func Follow(ctx context.Context, cfg Config, client Client, targets []Target, rep *Report, untilClear bool, onChange func(*Report) error) error {
	f := newFollower(cfg, targets, rep)
	if untilClear && f.findings() == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan update)
	for i, t := range targets {
		if rep.Types[i].Error != "" {
			continue
		}
		go watchType(ctx, cfg, client, i, t, rep.Types[i].listRV, updates)
	}
	var tick <-chan time.Time
	if cfg.MinAge > 0 {
		tk := time.NewTicker(time.Second)
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case u := <-updates:
			f.apply(u)
		case <-tick:
		}
		f.refresh(rep)
		if onChange != nil {
			if err := onChange(rep); err != nil {
				return err
			}
		}
		if untilClear && f.findings() == 0 {
			return nil
		}
	}
}

// update is one change a type's watcher reports.
type update struct {
	i     int
	event watch.Event
	// reset, when set, replaces the type's state after a relist.
	reset *typeScan
	// warning, when set, says the type stopped being watched.
	warning string
}

// follower is the state Follow keeps; only Follow's goroutine touches it.
type follower struct {
	cfg     Config
	targets []Target
	sums    []TypeSummary
	items   []map[string]Item
	// warnings are the report's warnings plus those of the watches.
	warnings []string
}

func newFollower(cfg Config, targets []Target, rep *Report) *follower {
	f := &follower{cfg: cfg, targets: targets, sums: append([]TypeSummary(nil), rep.Types...), items: make([]map[string]Item, len(targets)), warnings: rep.Warnings}
	index := map[string]int{}
	for i, t := range targets {
		f.items[i] = map[string]Item{}
		index[t.Name()] = i
	}
	for _, it := range rep.Items {
		if i, ok := index[it.Resource]; ok {
			it.expected = f.sums[i].ReportsObservedGeneration
			f.items[i][it.Key()] = it
		}
	}
	return f
}

func (f *follower) findings() int {
	n := 0
	for _, s := range f.sums {
		n += s.Findings
	}
	return n
}

func (f *follower) apply(u update) {
	i := u.i
	switch {
	case u.warning != "":
		f.warnings = append(f.warnings, u.warning)
		return
	case u.reset != nil:
		f.sums[i] = u.reset.sum
		f.items[i] = map[string]Item{}
		for _, it := range u.reset.items {
			f.items[i][it.Key()] = it
		}
		return
	}
	data, err := json.Marshal(u.event.Object.(*unstructured.Unstructured).Object)
	if err != nil {
		return
	}
	o, err := DecodeObject(data)
	if err != nil {
		return
	}
	t := f.targets[i]
	s := &f.sums[i]
	key := t.Name() + "/" + o.Namespace + "/" + o.Name
	prev, known := f.items[i][key]
	prevState := Current
	switch {
	case known:
		prevState = prev.State
	case o.Generation == nil:
		prevState = NoGeneration
	}
	if u.event.Type != watch.Added {
		count(s, prevState, -1)
		s.Objects--
	}
	delete(f.items[i], key)
	if u.event.Type == watch.Deleted {
		return
	}
	c := Classify(o)
	count(s, c.State, 1)
	s.Objects++
	if o.ObservedGeneration != nil || len(o.Conditions) > 0 {
		s.ReportsObservedGeneration = true
	}
	if f.cfg.All || (c.State != Current && c.State != NoGeneration) {
		f.items[i][key] = newItem(t, o, c, f.cfg.Now())
	}
}

func count(s *TypeSummary, st State, d int) {
	switch st {
	case Current:
		s.Current += d
	case Lagging:
		s.Lagging += d
	case NeverObserved:
		s.NeverObserved += d
	case NoGeneration:
		s.NoGeneration += d
	}
}

// refresh recomputes ages and findings at the current time and writes the
// state into rep.
func (f *follower) refresh(rep *Report) {
	now := f.cfg.Now()
	rep.Now = now
	rep.Items = rep.Items[:0]
	for i := range f.targets {
		s := &f.sums[i]
		s.Findings = 0
		for k, it := range f.items[i] {
			it.expected = s.ReportsObservedGeneration
			it.AgeSeconds = int64(max(now.Sub(it.SpecChangedAt), 0) / time.Second)
			it.Finding = isFinding(it, f.cfg, now)
			it.Explanations = explain(it, f.targets[i])
			if it.Finding {
				s.Findings++
			}
			f.items[i][k] = it
			rep.Items = append(rep.Items, it)
		}
	}
	rep.Types = append(rep.Types[:0], f.sums...)
	rep.Warnings = f.warnings
	SortItems(rep.Items)
}

// watchType watches one type and sends its changes until ctx ends. When the
// watch's resourceVersion is too old it relists and sends the new state.
func watchType(ctx context.Context, cfg Config, client Client, i int, t Target, rv string, out chan<- update) {
	send := func(u update) bool {
		select {
		case out <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	backoff := func() bool {
		select {
		case <-time.After(time.Second):
			return true
		case <-ctx.Done():
			return false
		}
	}
	for ctx.Err() == nil {
		if rv == "" {
			ts := newTypeScan(t, cfg, cfg.Now())
			listRV, err := scanType(ctx, cfg, client, t, ts.add)
			if err != nil {
				if partial(err) {
					send(update{i: i, warning: t.Name() + ": " + err.Error() + "; its state is no longer followed"})
					return
				}
				if !backoff() {
					return
				}
				continue
			}
			ts.finish()
			rv = listRV
			if !send(update{i: i, reset: ts}) {
				return
			}
		}
		w, err := client.Watch(ctx, t, cfg.Namespace, metav1.ListOptions{
			ResourceVersion:     rv,
			AllowWatchBookmarks: true,
			LabelSelector:       cfg.LabelSelector,
			FieldSelector:       cfg.FieldSelector,
		})
		if err != nil {
			switch {
			case partial(err):
				send(update{i: i, warning: t.Name() + ": " + err.Error() + "; its state is no longer followed"})
				return
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				rv = ""
			}
			if !backoff() {
				return
			}
			continue
		}
		rv = consume(ctx, w, rv, func(ev watch.Event) bool { return send(update{i: i, event: ev}) })
		w.Stop()
	}
}

// consume forwards a watch's events until it ends and returns the
// resourceVersion to resume from ("" to relist).
func consume(ctx context.Context, w watch.Interface, rv string, fn func(watch.Event) bool) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return ""
				}
				return rv
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
			case watch.Added, watch.Modified, watch.Deleted:
				if _, ok := ev.Object.(*unstructured.Unstructured); !ok {
					continue
				}
				if m, err := meta.Accessor(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
				if !fn(ev) {
					return rv
				}
			}
		}
	}
}
