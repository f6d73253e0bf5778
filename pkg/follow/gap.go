package follow

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// Gap is a stretch of history a watch lost: the API server answered 410
// Gone after From, the watch relisted at To, and the events in between were
// never seen. Watch and churn report gaps in these words.
type Gap struct {
	// Resource is the resource, in the form of the report that holds the
	// gap: group/version/resource in watch's, resource.group in churn's.
	Resource string `json:"resource"`
	From     string `json:"from,omitempty"`
	To       string `json:"to"`
	// Revisions is how many cluster revisions the gap spans.
	Revisions *uint64 `json:"revisions,omitempty"`
	// Changes is how many objects were found changed, added or deleted by
	// comparing the relist with the last known state.
	Changes int       `json:"changes"`
	Error   string    `json:"error,omitempty"`
	Time    time.Time `json:"time"`
}

// GapOf returns the gap a SYNCED relist event names, before its changes are
// counted.
func GapOf(ev Event) Gap {
	return Gap{Resource: ev.Resource, From: ev.GapFrom, To: ev.ResourceVersion, Revisions: RevisionsBetween(ev.GapFrom, ev.ResourceVersion), Error: ev.GapError, Time: ev.Time}
}

// RevisionsBetween counts the cluster revisions from a to b. The count
// relies on resourceVersions being etcd revisions, which the API server
// guarantees to be comparable (1.35+); it is nil when they are not.
//
// Example: from "830" to "990" is 160 revisions; from "990" to "830", or
// from "830" to "", is nil.
func RevisionsBetween(a, b string) *uint64 {
	if a == "" || b == "" {
		return nil
	}
	if c, err := resourceversion.CompareResourceVersion(b, a); err != nil || c < 0 {
		return nil
	}
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return nil
	}
	d := y - x
	return &d
}
