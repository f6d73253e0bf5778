package lag

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Follow keeps rep up to date by watching every scanned type from the
// resourceVersion of its list: no polling, one watch per type. After each
// change it calls onChange (when set) with the updated report; an error from
// onChange (a failed print) ends Follow with that error. It returns nil as
// soon as nothing counts as a finding when untilClear is set (and with
// ErrStalled as soon as a finding is stalled), else when ctx ends
// (returning ctx's error). The watches are the one watch core's
// (follow.Follow): a dropped watch resumes from the last resourceVersion
// seen, after a backoff with jitter, and one that expires (410) relists
// its type and resumes; both are reported to cfg.Warnf. A type whose watch
// cannot be started (a 403) keeps its last state and adds a warning.
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
		if untilClear {
			if err := stalled(rep); err != nil {
				return err
			}
		}
	}
}

// update is one change a type's watcher reports.
type update struct {
	i     int
	event follow.Event
	// reset, when set, replaces the type's state after a relist.
	reset *typeScan
	// warning, when set, says the type stopped being watched.
	warning string
	// notice, when set, is a problem the watch survives (a retry, a lost
	// history), for Config.Warnf.
	notice string
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
	case u.notice != "":
		if f.cfg.Warnf != nil {
			f.cfg.Warnf("%s", u.notice)
		}
		return
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
	data, err := json.Marshal(u.event.Object.Object)
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
	if u.event.Type != follow.Added {
		s.count(prevState, -1)
		s.Objects--
	}
	delete(f.items[i], key)
	if u.event.Type == follow.Deleted {
		return
	}
	c := classify(f.cfg, t, o)
	s.count(c.State, 1)
	s.Objects++
	if o.ObservedGeneration != nil || len(o.Conditions) > 0 {
		s.ReportsObservedGeneration = true
	}
	if f.cfg.All || (c.State != Current && c.State != NoGeneration) {
		f.items[i][key] = newItem(t, o, c, f.cfg.Now())
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

// watchType follows one type through the one watch core (follow.Follow:
// resume from the last resourceVersion seen with backoff and jitter, relist
// after 410 Gone) and sends its changes until ctx ends. A relist is made
// with lag's own streamed list and replaces the type's state. The retries
// and lost histories the core reports go to Config.Warnf; a type whose
// watch cannot be started (a 403, a 404) keeps its last state with a
// warning in the report.
func watchType(ctx context.Context, cfg Config, client Client, i int, t Target, rv string, out chan<- update) {
	send := func(u update) {
		select {
		case out <- u:
		case <-ctx.Done():
		}
	}
	fc := follow.NewConfig()
	fc.LabelSelector, fc.FieldSelector, fc.Since, fc.Now = cfg.LabelSelector, cfg.FieldSelector, rv, cfg.Now
	tgt := follow.Target{Resource: t.Resource}
	if t.Namespaced {
		tgt.Namespace = cfg.Namespace
	}
	h := follow.Handler{
		List: func(ctx context.Context, _ follow.SyncReason, _, _ string) (string, error) {
			ts := newTypeScan(t, cfg, cfg.Now())
			listRV, err := scanType(ctx, cfg, client, t, ts.add)
			if err != nil {
				return "", err
			}
			ts.finish()
			send(update{i: i, reset: ts})
			return listRV, nil
		},
		Event: func(ctx context.Context, ev follow.Event) {
			if ev.Type != follow.Bookmark {
				send(update{i: i, event: ev})
			}
		},
	}
	notef := func(format string, args ...any) { send(update{i: i, notice: fmt.Sprintf(format, args...)}) }
	w := typeWatcher{client: client, t: t, namespace: cfg.Namespace}
	if err := follow.Follow(ctx, w, fc, tgt, notef, h); err != nil {
		send(update{i: i, warning: t.Name() + ": " + err.Error() + "; its state is no longer followed"})
	}
}

// typeWatcher is the follow.Watcher of one type over a Client.
type typeWatcher struct {
	client    Client
	t         Target
	namespace string
}

var _ follow.Watcher = typeWatcher{}

func (w typeWatcher) Watch(ctx context.Context, _ follow.Target, opts metav1.ListOptions) (watch.Interface, error) {
	return w.client.Watch(ctx, w.t, w.namespace, opts)
}
