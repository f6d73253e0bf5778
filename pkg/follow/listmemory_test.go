package follow

import "testing"

// TestListMemoryFreesOnceAfterTheInitialLists: the memory is handed back
// once, after the SYNCED of the last initial list; a relist's SYNCED does
// not count, and later events free nothing more.
func TestListMemoryFreesOnceAfterTheInitialLists(t *testing.T) {
	m := NewListMemory(2)
	freed := 0
	m.free = func() { freed++ }
	events := []struct {
		ev   Event
		want int
	}{
		{Event{Type: List, Reason: SyncInitial, Resource: "v1/configmaps"}, 0},
		{Event{Type: Synced, Reason: SyncInitial, Resource: "v1/configmaps"}, 0},
		{Event{Type: Synced, Reason: SyncRelist, Resource: "v1/configmaps"}, 0},
		{Event{Type: Modified, Resource: "v1/configmaps"}, 0},
		{Event{Type: Synced, Reason: SyncInitial, Resource: "v1/secrets"}, 1},
		{Event{Type: Synced, Reason: SyncInitial, Resource: "v1/secrets"}, 1},
	}
	for i, e := range events {
		m.Observe(e.ev)
		if freed != e.want {
			t.Fatalf("after event %d (%s %s): freed %d times, want %d", i, e.ev.Type, e.ev.Reason, freed, e.want)
		}
	}
	none := NewListMemory(0)
	none.free = func() { t.Error("a run without lists freed") }
	none.Observe(Event{Type: Synced, Reason: SyncInitial})
}
