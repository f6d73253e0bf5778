package doctor

import (
	"fmt"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// judgeEventRVs holds every event doctor's watches of a type delivered to
// the rule informers resume by: each event's object carries a comparable
// resourceVersion, and within one watch they do not go backwards (a
// streaming list's initial events come in key order, so only their
// presence is checked). A front proxy or aggregated server that drops
// metadata.resourceVersion from watch events leaves every reflector unable
// to resume after them.
func judgeEventRVs(watches []*watched) Check {
	total, missing, first := 0, 0, ""
	for _, w := range watches {
		prev := ""
		for _, e := range w.events {
			total++
			where := fmt.Sprintf("%s %s in the watch from %s", e.typ, e.name, fromName(w))
			switch {
			case e.rv == "":
				missing++
				if first == "" {
					first = where
				}
				continue
			case !comparable(e.rv):
				return fail(WatchEventsHaveRV, fmt.Sprintf("%s carries resourceVersion %q, not a comparable integer", where, e.rv), "events", strconv.Itoa(total))
			case !w.initial && prev != "" && compareOrZero(e.rv, prev) < 0:
				return fail(WatchEventsHaveRV, fmt.Sprintf("%s carries resourceVersion %s after %s: a watch's events went backwards", where, e.rv, prev), "events", strconv.Itoa(total))
			}
			prev = e.rv
		}
	}
	switch {
	case missing > 0:
		return fail(WatchEventsHaveRV, fmt.Sprintf("%d of %s carry no resourceVersion (e.g. %s): informers cannot resume after them and relist", missing, text.Plural(total, "watch event"), first),
			"events", strconv.Itoa(total), "missing", strconv.Itoa(missing))
	case total == 0:
		return skip(WatchEventsHaveRV, "doctor's watches delivered no event to look at", "events", "0")
	}
	return pass(WatchEventsHaveRV, fmt.Sprintf("%s, each with a comparable resourceVersion, in order within each watch", text.Plural(total, "watch event")), "events", strconv.Itoa(total), "missing", "0")
}

func fromName(w *watched) string {
	if w.initial {
		return "a streaming list"
	}
	return "resourceVersion " + w.from
}
