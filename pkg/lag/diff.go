package lag

// Diff compares two states of a report's items, for a live view that
// prints changes rather than whole tables. It returns the items of cur that
// are new or changed since prev, in cur's order, then the items of prev
// that left the report, in prev's order, turned current: an item leaves the
// report when its controller caught up (or it was deleted, which the report
// does not tell apart).
//
// Example: prev holds web (lagging, LAG 2) and api (lagging, LAG 1); cur
// holds web (lagging, LAG 1) and db (never-observed). Diff returns web (LAG
// 1), db, and api as current with LAG 0.
func Diff(prev, cur []Item) []Item {
	before := make(map[string]Item, len(prev))
	for _, it := range prev {
		before[it.Key()] = it
	}
	var out []Item
	now := make(map[string]bool, len(cur))
	for _, it := range cur {
		now[it.Key()] = true
		if old, ok := before[it.Key()]; !ok || itemChanged(old, it) {
			out = append(out, it)
		}
	}
	for _, it := range prev {
		if !now[it.Key()] {
			it.State, it.Lag, it.LaggingConditions, it.Finding, it.ObservedGeneration = Current, 0, nil, false, it.Generation
			out = append(out, it)
		}
	}
	return out
}

// itemChanged reports whether b shows something a reader of the live view
// has not seen in a: its ages move every second and are not changes.
func itemChanged(a, b Item) bool {
	return a.State != b.State || a.Lag != b.Lag || a.Finding != b.Finding || len(a.LaggingConditions) != len(b.LaggingConditions) ||
		optInt(a.Generation) != optInt(b.Generation) || optInt(a.ObservedGeneration) != optInt(b.ObservedGeneration)
}

// optInt maps an absent value to -1, which no generation takes.
func optInt(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
