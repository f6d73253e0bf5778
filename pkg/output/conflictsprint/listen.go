package conflictsprint

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// ListenStats says on w (stderr) what a --listen receiver took in, and
// what it dropped or refused, and why: the refusals by reason, the most
// frequent first, then the first ones with their senders (both escaped by
// the receiver).
func ListenStats(w io.Writer, st audit.ListenStats) {
	fmt.Fprintf(w, "received %d audit events in %d batches (at most %d of the queue's %d batches waited at once; at most %d of %d MiB held)\n",
		st.Events, st.Batches, st.PeakQueued, st.QueueBatches, st.PeakMemory>>20, st.QueueBytes>>20)
	if st.DroppedBatches > 0 || st.DroppedEvents > 0 {
		output.Warnf(w, "dropped %d events (%d batches found the queue of %d batches full, the rest did not fit in %d MiB): the analysis fell behind; the API server was not held up", st.DroppedEvents, st.DroppedBatches, st.QueueBatches, st.QueueBytes>>20)
	}
	if st.RejectedEvents > 0 {
		output.Warnf(w, "skipped %d events that are not audit events as a log line holds one (each cost itself only)", st.RejectedEvents)
	}
	if st.Rejected > 0 {
		reasons := slices.SortedFunc(maps.Keys(st.RejectedBy), func(a, b string) int {
			return cmp.Or(cmp.Compare(st.RejectedBy[b], st.RejectedBy[a]), strings.Compare(a, b))
		})
		by := make([]string, len(reasons))
		for i, r := range reasons {
			by[i] = fmt.Sprintf("%d %s", st.RejectedBy[r], r)
		}
		output.Warnf(w, "refused %d requests or connections, none counted: %s", st.Rejected, strings.Join(by, ", "))
	}
	if st.Rejected > 0 || st.RejectedEvents > 0 {
		for _, r := range st.Rejects {
			fmt.Fprintf(w, "  refused from %s: %s\n", r.Remote, r.Reason)
		}
		if n := st.Rejected + st.RejectedEvents; n > int64(len(st.Rejects)) {
			fmt.Fprintf(w, "  (the first %d of %d shown)\n", len(st.Rejects), n)
		}
	}
	if st.OtherStages > 0 {
		fmt.Fprintf(w, "%d events of other stages than ResponseComplete and Panic were not kept\n", st.OtherStages)
	}
	if st.SpoolStopped != "" {
		output.Warnf(w, "the copy of the events for a second reading stopped (%s): %d events older than the window (%s) dropped, %d read once and lost to a second reading; raise --spool-max, or give TMPDIR room", st.SpoolStopped, st.Late, st.LateWindow, st.SpoolLost)
	}
}
