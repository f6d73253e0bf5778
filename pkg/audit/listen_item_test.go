package audit

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// decodeLine is what Decode makes of one line in the middle of a log
// (after a first line: a stream's first bytes could be taken for a log
// service's export): its event, whether it is one of another stage, or
// its error.
func decodeLine(line string) (ev *Event, other bool, err error) {
	n := 0
	st, err := Decode(context.Background(), NewSource("line", strings.NewReader(eventLine(0)+"\n"+line)), Options{}, func(e *Event) error {
		if n++; n == 2 {
			c := *e
			ev = &c
		}
		return nil
	})
	return ev, st.OtherStages == 1, err
}

// FuzzListenItem holds the receiver's reading of an EventList's items
// (readBatch: the event the list's scanner read where the item stands,
// else the line's) to Decode of each item's line: an item passed on is a
// line Decode reads as one event, the same event as the receiver's (in
// its own memory, not the body's) with the same stageTimestamp; an item
// counted as of another stage is a line Decode ignores as one; an item
// refused is a line Decode refuses. The capture, unlike a log, goes on.
func FuzzListenItem(f *testing.F) {
	for _, it := range []string{
		strings.Replace(eventLine(1), `"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", 1),
		eventLine(2),
		`1`, `"x"`, `null`, `[]`, `{}`, `{"verb":5}`, `{"stage":"ResponseComplete","verb":5}`,
		`{"kind":"Foo","stage":"ResponseComplete"}`, `{"apiVersion":"audit.k8s.io/v1beta1","stage":"Panic"}`,
		`{"Kind":"Event","stage":"ResponseComplete"}`, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","kind":"Event","stage":"Panic"}`,
		`{"stage":"ResponseStarted"}`, `{"stage":"ResponseComplete","stageTimestamp":"yesterday"}`,
		`{"stage":"ResponseComplete","stageTimestamp":"2026-11-27T10:00:00+01:00"}`,
		`{"stage":"ResponseComplete","responseStatus":{"code":1.5}}`, `{"stage":"ResponseComplete","user":{"extra":{"a":[1]}}}`,
		`{"stage":"ResponseComplete"},{"stage":"Panic","impersonatedUser":null},{"stag\u0065":"ResponseComplete"}`,
	} {
		f.Add(it)
	}
	f.Fuzz(func(t *testing.T, items string) {
		body := listOf(items)
		raw, err := splitBatch(body)
		if err != nil {
			return
		}
		l := &Listener{mem: budget{max: math.MaxInt64}, scanners: make(chan *valueMemo, 1)}
		l.scanners <- newValueMemo()
		b := &batch{newest: math.MinInt64}
		if err := l.readBatch(b, body); err != nil {
			t.Fatalf("readBatch: %v, but the body is an EventList", err)
		}
		// The next request reuses the body: no event may point into it.
		for i := range body {
			body[i] = 'X'
		}
		var want strings.Builder
		var wantTS []int64
		var wantEvents []Event
		var rejected, other int64
		for _, it := range raw {
			line := string(appendLine(nil, []byte(it)))
			ev, isOther, err := decodeLine(line)
			switch {
			case err != nil || len(it) > MaxLineBytes:
				rejected++
			case isOther:
				other++
			case ev != nil:
				want.WriteString(line)
				wantTS = append(wantTS, nanos(ev.StageTimestamp))
				wantEvents = append(wantEvents, *ev)
			default:
				t.Fatalf("Decode of %q: no event, no error", line)
			}
		}
		var gotTS []int64
		for _, m := range b.meta {
			gotTS = append(gotTS, m.ts)
		}
		if diff := cmp.Diff(want.String(), string(b.lines)); diff != "" {
			t.Errorf("lines passed on (-Decode +receiver):\n%s", diff)
		}
		if diff := cmp.Diff(wantTS, gotTS); diff != "" {
			t.Errorf("stageTimestamps (-Decode +receiver):\n%s", diff)
		}
		if diff := cmp.Diff(wantEvents, b.events, cmpopts.IgnoreUnexported(Event{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("events (-Decode +receiver):\n%s", diff)
		}
		if b.rejected != rejected || b.other != other {
			t.Errorf("refused %d, other stages %d; Decode: %d, %d", b.rejected, b.other, rejected, other)
		}
	})
}

// TestEventStringsAreAll: Event.strings names every string of an Event,
// so that moving an event's strings (moveStrings) misses none.
func TestEventStringsAreAll(t *testing.T) {
	var count func(reflect.Type) int
	count = func(ty reflect.Type) int {
		n := 0
		for f := range ty.Fields() {
			switch f.Type.Kind() {
			case reflect.String:
				n++
			case reflect.Struct:
				n += count(f.Type)
			}
		}
		return n
	}
	var e Event
	seen := map[*string]bool{}
	for _, p := range e.strings() {
		seen[p] = true
	}
	if n := count(reflect.TypeFor[Event]()); n != eventStrings || len(seen) != eventStrings {
		t.Errorf("Event has %d strings, Event.strings names %d different ones of %d: name every one", n, len(seen), eventStrings)
	}
}

// TestLateWindowMovesEvents: the late window drops lines from a batch
// and moves the rest down; their events move with them.
func TestLateWindowMovesEvents(t *testing.T) {
	l := &Listener{mem: budget{max: math.MaxInt64}, scanners: make(chan *valueMemo, 1)}
	l.scanners <- newValueMemo()
	b := &batch{newest: math.MinInt64}
	// Events 0, 5000, 1, 5001, ... ms: the odd ones more than 2 s late.
	var order []int
	for i := range 4 {
		order = append(order, 5000+i, i)
	}
	var items []string
	for _, i := range order {
		items = append(items, eventLine(i))
	}
	if err := l.readBatch(b, listOf(items...)); err != nil {
		t.Fatal(err)
	}
	w := lateWindow{window: int64(2 * time.Second), on: true, newest: math.MinInt64}
	if _, late := w.unsafeFilter(b); late != 4 {
		t.Fatalf("%d late, want 4", late)
	}
	rest := b.lines[len(b.lines):cap(b.lines)]
	for i := range rest {
		rest[i] = 'X'
	}
	lines := strings.Split(strings.TrimSuffix(string(b.lines), "\n"), "\n")
	if len(lines) != 4 || len(b.events) != 4 {
		t.Fatalf("%d lines, %d events left, want 4", len(lines), len(b.events))
	}
	for i, line := range lines {
		ev, _, err := decodeLine(line)
		if err != nil || ev == nil || ev.AuditID != fmt.Sprintf("id-%d", 5000+i) {
			t.Fatalf("line %d: %v %v", i, ev, err)
		}
		if diff := cmp.Diff(*ev, b.events[i], cmpopts.IgnoreUnexported(Event{})); diff != "" {
			t.Errorf("event %d (-its line +moved):\n%s", i, diff)
		}
	}
}
