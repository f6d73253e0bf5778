package follow

import "runtime/debug"

// QueueLen is the capacity of the channel a Stream sends to, for the
// engines that consume one. An initial list is sent page by page as
// decoded objects: while a consumer takes them in, the channel is full,
// so its capacity is the part of the decoded list alive at once beside
// the page being sent. A watch's bursts are taken from the API server's
// connection meanwhile, not lost.
const QueueLen = 256

// ListMemory hands the memory of a run's initial lists back to the
// operating system once the consumer has taken them in: pages of decoded
// objects, the most garbage a run makes at once, which the runtime would
// otherwise keep for minutes as a heap that the tracked state no longer
// needs.
type ListMemory struct {
	left int
	free func()
}

// NewListMemory returns a ListMemory waiting for lists initial lists:
// one per target of the Streams, none for a Stream from Config.Since.
func NewListMemory(lists int) *ListMemory {
	return &ListMemory{left: lists, free: debug.FreeOSMemory}
}

// Observe is called with every event taken from the Streams, after the
// consumer has handled it: after the SYNCED event of the last initial
// list, it frees once. A target left out never sends its SYNCED, and
// then nothing is freed.
func (m *ListMemory) Observe(ev Event) {
	if m.left <= 0 || ev.Type != Synced || ev.Reason != SyncInitial {
		return
	}
	m.left--
	if m.left == 0 {
		m.free()
	}
}
