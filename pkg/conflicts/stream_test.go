package conflicts

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// genLine is one generated event and when it completed.
type genLine struct {
	completed time.Time
	text      string
}

// genLog generates n events over about n x 40ms: writers (service
// accounts with pods, and a kubectl user) that get, update, patch, apply,
// create and delete a few ConfigMaps, retry after 409s, renew a Lease;
// objects rr-* are logged at RequestResponse level (resulting
// resourceVersions), mixed-0 only partly. Lines are in completion order
// but for a jitter of up to 5ms, as an API server writes them.
func genLog(seed uint64, n int, start time.Time) []genLine {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var out []genLine
	t, rv := start, 1000
	for i := 0; i < n; i++ {
		t = t.Add(time.Duration(1+rnd.IntN(80)) * time.Millisecond)
		// Each log its own auditIDs, as each API server makes its own.
		out = append(out, genEvent(rnd, int(seed)*1_000_000+i, t, &rv))
	}
	slices.SortStableFunc(out, func(a, b genLine) int { return a.completed.Compare(b.completed) })
	for i := 1; i < len(out); i++ {
		if out[i].completed.Sub(out[i-1].completed) < 5*time.Millisecond && rnd.IntN(3) == 0 {
			out[i], out[i-1] = out[i-1], out[i]
		}
	}
	// A few events twice (a webhook's retry): counted once.
	for i := len(out) - 1; i > 0; i-- {
		if rnd.IntN(100) == 0 {
			out = slices.Insert(out, i, out[i-1])
		}
	}
	return out
}

func genEvent(rnd *rand.Rand, i int, recv time.Time, rv *int) genLine {
	w := rnd.IntN(9)
	user, pod, fm := fmt.Sprintf("system:serviceaccount:ns:ctrl-%d", w/3), fmt.Sprintf("ctrl-%d-x%d", w/3, w%3), fmt.Sprintf("ctrl-%d", w/3)
	if w == 8 {
		user, pod, fm = "rv-admin", "", "kubectl-edit"
	}
	names := []string{"rr-0", "rr-1", "mixed-0", "c-0", "c-1", "c-2", "c-3", "c-4"}
	name, group, resource := names[rnd.IntN(len(names))], "", "configmaps"
	verb, code, msg, details, precond, result := "get", 200, "", "", "", ""
	switch r := rnd.IntN(100); {
	case r < 35:
	case r < 42:
		verb, resource, group, name, fm = "update", "leases", "coordination.k8s.io", "leader", ""
	case r < 45:
		verb, name, details = "create", "", "resourcequotas"
	case r < 48:
		verb = "delete"
	case r < 52:
		verb, fm = "patch", "apply-"+fm
	default:
		verb = []string{"update", "update", "patch"}[rnd.IntN(3)]
	}
	if verb != "get" {
		*rv++
		if verb == "update" {
			precond = fmt.Sprint(*rv - rnd.IntN(4))
		}
		if rnd.IntN(100) < 30 {
			code, msg = 409, "Operation cannot be fulfilled: the object has been modified"
			switch {
			case verb == "patch" && strings.HasPrefix(fm, "apply-") && rnd.IntN(2) == 0:
				msg = `Apply failed with 1 conflict: conflict with "ctrl-` + fmt.Sprint(rnd.IntN(3)) + `": .data.x`
			case verb == "patch" && strings.HasPrefix(fm, "apply-"):
				msg = "Apply failed with 2 conflicts: conflicts with \"ctrl-0\":\n- .data.x\nconflicts with \"ctrl-" + fmt.Sprint(1+rnd.IntN(2)) + "\" using v1:\n- .data.y"
			case verb == "create" && rnd.IntN(2) == 0:
				msg, details, name = `configmaps "c-0" already exists`, "configmaps", "c-0"
			}
		} else if strings.HasPrefix(name, "rr-") || name == "mixed-0" && rnd.IntN(4) > 0 {
			result = fmt.Sprint(*rv)
		}
	}
	done := recv.Add(time.Duration(1+rnd.IntN(1500)) * time.Millisecond)
	if rnd.IntN(200) == 0 {
		done = recv.Add(3 * time.Second)
	}
	uri := "/api/v1/namespaces/ns/" + resource + "/" + name
	if fm != "" && verb != "get" {
		uri += "?fieldManager=" + fm + "&fieldValidation=Strict"
		if verb == "patch" && strings.HasPrefix(fm, "apply-") && rnd.IntN(2) == 0 {
			uri += "&force=true"
		}
		if rnd.IntN(50) == 0 {
			uri += "&dryRun=All"
		}
	}
	extra := ""
	if pod != "" {
		extra = fmt.Sprintf(`,"extra":{"authentication.kubernetes.io/pod-name":[%q]}`, pod)
	}
	resp := ""
	if result != "" {
		resp = fmt.Sprintf(`,"responseObject":{"metadata":{"resourceVersion":%q},"data":{"k":"v"}}`, result)
	}
	text := fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete","requestURI":%q,"verb":%q,"user":{"username":%q%s},"userAgent":"%s/v1","objectRef":{"resource":%q,"namespace":"ns","name":%q,"apiGroup":%q,"resourceVersion":%q},"responseStatus":{"code":%d,"message":%q,"details":{"kind":%q}}%s,"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
		i, uri, verb, user, extra, user, resource, name, group, precond, code, msg, details, resp,
		recv.Format(time.RFC3339Nano), done.Format(time.RFC3339Nano))
	return genLine{completed: done, text: text}
}

func writeLog(t *testing.T, path string, lines []genLine) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// referenceReport is the analysis as it was: every record kept, sorted.
func referenceReport(t *testing.T, sources []audit.Source, cfg Config) *Report {
	t.Helper()
	c := refNewCollector(cfg)
	var stats audit.Stats
	for _, src := range sources {
		st, err := audit.Decode(context.Background(), src, audit.Options{}, func(e *audit.Event) error {
			ev := *e
			c.Add(&ev)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stats.Add(st)
	}
	rep := c.Report()
	stats.Duplicates = c.dups
	rep.Input = stats
	rep.Summary.DryRuns = c.dryRuns
	return rep
}

func TestStreamMatchesReference(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	one := filepath.Join(dir, "one.log")
	writeLog(t, one, genLog(1, 12000, t0))
	rotated := filepath.Join(dir, "rotated")
	if err := os.Mkdir(rotated, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := genLog(2, 12000, t0)
	writeLog(t, filepath.Join(rotated, "audit-2026-11-24T10-02-00.000.log"), lines[:4000])
	writeLog(t, filepath.Join(rotated, "audit-2026-11-24T10-04-00.000.log"), lines[4000:8000])
	writeLog(t, filepath.Join(rotated, "audit.log"), lines[8000:])
	// Two API servers' logs over the same minutes, one after the other:
	// out of order far beyond the skew.
	servers := filepath.Join(dir, "servers.log")
	writeLog(t, servers, append(genLog(3, 3000, t0), genLog(4, 3000, t0)...))

	cfgs := map[string]func(*Config){
		"default":      func(*Config) {},
		"short window": func(c *Config) { c.RetryWindow = 200 * time.Millisecond },
		"timeline":     func(c *Config) { c.Object = &ObjectKey{Resource: "configmap", Name: "c-1"} },
		"timeline rr":  func(c *Config) { c.Object = &ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "rr-0"} },
		"hottest":      func(c *Config) { c.HottestTimeline = true },
		"since until":  func(c *Config) { c.Since, c.Until = t0.Add(time.Minute), t0.Add(4*time.Minute) },
	}
	// A log on stdin is read as a stream, copied as it is read, and read
	// again from the copy when needed.
	for _, log := range []struct {
		name            string
		path            string
		fallback, stdin bool
	}{{"one file", one, false, false}, {"rotated", rotated, false, false}, {"two servers", servers, true, false},
		{"one file on stdin", one, false, true}, {"two servers on stdin", servers, true, true}} {
		for name, set := range cfgs {
			t.Run(log.name+"/"+name, func(t *testing.T) {
				cfg := NewConfig()
				set(&cfg)
				sources, err := audit.Open(log.path, nil)
				if err != nil {
					t.Fatal(err)
				}
				analyzed := sources
				if log.stdin {
					if analyzed, err = audit.Open("-", mustOpen(t, log.path)); err != nil {
						t.Fatal(err)
					}
				}
				fellBack := false
				defer func(f func()) { onFallback = f }(onFallback)
				onFallback = func() { fellBack = true }
				got, err := Analyze(context.Background(), analyzed, cfg)
				if err != nil {
					t.Fatal(err)
				}
				want := referenceReport(t, sources, cfg)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("report (-reference +stream):\n%s", diff)
				}
				if fellBack != log.fallback {
					t.Errorf("read again keeping every record: %v, want %v", fellBack, log.fallback)
				}
				if want.Summary.Conflicts == 0 || cfg.Object != nil && len(want.Timeline) == 0 {
					t.Errorf("the generated log tests nothing: %+v", want.Summary)
				}
			})
		}
	}
}

// TestAddBatchIsAdd: records added in batches (as the pipe hands them on),
// whose ripe entries are released a chunk at a time, are released as
// adding them one by one releases them: after each batch both streams
// hold the same entries and have released up to the same completion, and
// the reports are the same; for batches smaller and larger than a chunk,
// with the log a little out of order (genLog swaps neighbours).
func TestAddBatchIsAdd(t *testing.T) {
	var events []audit.Event
	for _, l := range genLog(5, 6000, time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)) {
		if _, err := audit.Decode(context.Background(), audit.NewSource("x", strings.NewReader(l.text)), audit.Options{}, func(e *audit.Event) error {
			events = append(events, *e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	records := func(c *Collector) []item {
		var items []item
		for i := range events {
			if it, ok := c.record(&events[i]); ok {
				items = append(items, it)
			}
		}
		return items
	}
	for _, batch := range []int{3, releaseChunk, 100, pipeBatch} {
		one, many := newCollector(NewConfig(), analyzeSkew), newCollector(NewConfig(), analyzeSkew)
		items, batched := records(one), records(many)
		released := 0
		for len(items) > 0 {
			n := min(batch, len(items))
			for _, it := range items[:n] {
				one.stream.add(it)
			}
			many.stream.addBatch(batched[:n])
			items, batched = items[n:], batched[n:]
			if h1, h2 := one.stream.heap.len(), many.stream.heap.len(); h1 != h2 || !one.stream.frontier.Equal(many.stream.frontier) {
				t.Fatalf("batches of %d: %d entries held, released to %v; one by one %d, to %v", batch, h2, many.stream.frontier, h1, one.stream.frontier)
			}
			if many.stream.released {
				released++
			}
		}
		if one.stream.inexact || many.stream.inexact || released == 0 {
			t.Fatalf("batches of %d: inexact %v/%v, released after %d batches", batch, one.stream.inexact, many.stream.inexact, released)
		}
		want := one.Report()
		if want.Summary.Conflicts == 0 {
			t.Fatalf("the generated log tests nothing: %+v", want.Summary)
		}
		if diff := cmp.Diff(want, many.Report()); diff != "" {
			t.Errorf("batches of %d (-one by one +batches):\n%s", batch, diff)
		}
	}
}

// BenchmarkStream analyses records already decoded: the sequential part
// of Analyze.
func BenchmarkStream(b *testing.B) {
	lines := genLog(1, 20000, time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	var events []audit.Event
	for _, l := range lines {
		if _, err := audit.Decode(context.Background(), audit.NewSource("x", strings.NewReader(l.text)), audit.Options{}, func(e *audit.Event) error {
			events = append(events, *e)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		c := newCollector(NewConfig(), analyzeSkew)
		for i := range events {
			c.Add(&events[i])
		}
		c.Report()
	}
}

// BenchmarkAnalyzeFile decodes and analyses a generated file of 20,000
// events from a file (BenchmarkAnalyze reads a stream given to NewSource,
// which is also copied to a temporary file as it is read, as stdin is).
func BenchmarkAnalyzeFile(b *testing.B) {
	var buf strings.Builder
	for _, l := range genLog(1, 20000, time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)) {
		buf.WriteString(l.text + "\n")
	}
	path := filepath.Join(b.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(buf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	sources, err := audit.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(context.Background(), sources, NewConfig()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRecQueueOrder checks that recQueue hands records out as recHeap
// alone does, whether they arrive nearly in order (the sorted run), far
// out of it (the heap) or mixed, with pops between the pushes, and ties
// broken by gets first, receipt, arrival.
func TestRecQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spread := range []int{0, 3, 40, 5000} {
		var q recQueue
		var h recHeap
		popped := 0
		check := func() {
			want, got := h.pop(), q.pop()
			if got != want {
				t.Fatalf("spread %d: pop %d: got seq %d, want %d", spread, popped, got.seq, want.seq)
			}
			popped++
		}
		for i := range 20000 {
			at := t0.Add(time.Duration(i+rng.IntN(spread+1)) * time.Millisecond / 4)
			r := &record{completed: at, received: at.Add(-time.Duration(rng.IntN(3)) * time.Millisecond), read: rng.IntN(2) == 0, seq: uint64(i)}
			it := recordItem(r)
			if r.read && rng.IntN(2) == 0 {
				// A get the collector made no record of.
				it = item{oid: uint32(i), received: r.received, completed: r.completed}
			}
			e := entryOf(&it, r.seq)
			h.push(e)
			q.push(e)
			for q.len() > 3000 || rng.IntN(4) == 0 && q.len() > 0 {
				check()
			}
		}
		for q.len() > 0 {
			check()
		}
		if popped != 20000 || len(h) != 0 {
			t.Fatalf("spread %d: %d popped, %d left in the heap", spread, popped, len(h))
		}
	}
}

// TestHostPrefixedLogIsThePlainLog: the log oc adm node-logs prints (each
// line after the replica's host name, two replicas) gives the report of
// the plain log, with each timeline row naming its replica; every row
// names its auditID.
func TestHostPrefixedLogIsThePlainLog(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	lines := genLog(5, 3000, t0)
	plain, prefixed := filepath.Join(dir, "plain.log"), filepath.Join(dir, "prefixed.log")
	writeLog(t, plain, lines)
	hosts := make([]genLine, len(lines))
	for i, l := range lines {
		hosts[i] = genLine{completed: l.completed, text: fmt.Sprintf("master-%d %s", i%2, l.text)}
	}
	writeLog(t, prefixed, hosts)
	run := func(path string) *Report {
		cfg := NewConfig()
		cfg.Object = &ObjectKey{Resource: "cm", Name: "c-1"}
		sources, err := audit.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze(context.Background(), sources, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	want, got := run(plain), run(prefixed)
	if len(got.Timeline) == 0 {
		t.Fatal("no timeline")
	}
	for i := range got.Timeline {
		a := &got.Timeline[i]
		if a.Replica != "master-0" && a.Replica != "master-1" || a.AuditID == "" {
			t.Errorf("row %d: replica %q, auditID %q", i, a.Replica, a.AuditID)
		}
		a.Replica = ""
	}
	want.Input, got.Input = audit.Stats{}, audit.Stats{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prefixed log's report (-plain +prefixed):\n%s", diff)
	}
}
