package conflicts

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// writeManyLog writes n Metadata-level events, one a millisecond, in
// completion order: gets (getPct percent), updates and patches (a tenth of
// them 409s) by writers service accounts with pods, on objects
// ConfigMaps, chosen at random. It returns the file's path.
func writeManyLog(tb testing.TB, n, objects, writers, getPct int) string {
	return writeManyLogAt(tb, n, objects, writers, getPct, false)
}

// writeManyLogAt is writeManyLog, at RequestResponse level when rr: every
// success has its resulting resourceVersion (one counter for all objects,
// as etcd's), and every update its precondition, one of the object's last
// four versions (a 409 names an older one than the object's).
func writeManyLogAt(tb testing.TB, n, objects, writers, getPct int, rr bool) string {
	tb.Helper()
	rnd := rand.New(rand.NewPCG(uint64(n), 3))
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	rv, versions := 1000, make([][]int, objects)
	var b strings.Builder
	for i := range n {
		w, o := rnd.IntN(writers), rnd.IntN(objects)
		verb, code, query, precond, resp := "get", 200, "", "", ""
		if r := rnd.IntN(100); r >= getPct {
			verb, query = []string{"update", "patch"}[r%2], fmt.Sprintf("?fieldManager=ctrl-%d", w)
			if rnd.IntN(10) == 0 {
				code = 409
			}
			if vs := versions[o]; rr && verb == "update" && len(vs) > 0 {
				last := len(vs) - 1
				if code == 409 {
					last = max(last-1, 0)
				}
				precond = fmt.Sprint(vs[rnd.IntN(last+1)])
			}
			if rr && code == 200 {
				rv++
				versions[o] = append(versions[o][max(len(versions[o])-3, 0):], rv)
				resp = fmt.Sprintf(`,"responseObject":{"metadata":{"resourceVersion":"%d"}}`, rv)
			}
		}
		if precond != "" {
			precond = `,"resourceVersion":"` + precond + `"`
		}
		recv := t0.Add(time.Duration(i) * time.Millisecond)
		fmt.Fprintf(&b, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete",`+
			`"requestURI":"/api/v1/namespaces/app/configmaps/config-%d%s","verb":%q,`+
			`"user":{"username":"system:serviceaccount:team:ctrl-%d","extra":{"authentication.kubernetes.io/pod-name":["ctrl-%d-x"]}},`+
			`"userAgent":"manager/v0.0.0","objectRef":{"resource":"configmaps","namespace":"app","name":"config-%d","apiVersion":"v1"%s},`+
			`"responseStatus":{"metadata":{},"code":%d}%s,"requestReceivedTimestamp":%q,"stageTimestamp":%q}`+"\n",
			i, o, query, verb, w, w, o, precond, code, resp, recv.Format(time.RFC3339Nano), recv.Add(500*time.Microsecond).Format(time.RFC3339Nano))
	}
	path := filepath.Join(tb.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// retainedHeap is the live heap a collector of the given skew holds after
// reading path, before its report.
func retainedHeap(t *testing.T, path string, skew time.Duration) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := newCollector(NewConfig(), skew)
	// The set of events seen grows with the events by design (a hash
	// each, see audit.Dedup and its TestDedupMemory): left out here.
	c.dedup = nil
	_, err := audit.Decode(context.Background(), audit.NewSource(path, mustOpen(t, path)), audit.Options{Workers: 2, Reuse: true}, func(e *audit.Event) error {
		c.Add(e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.stream.inexact {
		t.Fatal("the stream could not follow the generated log")
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if c.Report().Summary.Conflicts == 0 {
		t.Fatal("the generated log has no 409s")
	}
	return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// TestAnalyzeMemoryBounded: four times the events on the same objects, by
// the same writers and readers, leave the stream holding about the same
// heap, at Metadata level (winners by time) and at RequestResponse level
// (winners by resourceVersion), while a collector that keeps every record
// (as a log out of order gets) holds more than twice as much: the measure sees growth
// with the events. At RequestResponse level the stream's report is also
// the reference analysis's: the successes it folded still name winners.
func TestAnalyzeMemoryBounded(t *testing.T) {
	const n = 30000
	for _, level := range []struct {
		name    string
		rr      bool
		objects int
	}{{"Metadata", false, 100}, {"RequestResponse", true, 25}} {
		t.Run(level.name, func(t *testing.T) {
			// Metadata: readers read each object often enough that no 409
			// needs a success older than the stream's history.
			// RequestResponse: each object has more successes than its
			// history keeps (maxHistory) in either log.
			one, four := writeManyLogAt(t, n, level.objects, 10, 70, level.rr), writeManyLogAt(t, 4*n, level.objects, 10, 70, level.rr)
			s1, s4 := retainedHeap(t, one, analyzeSkew), retainedHeap(t, four, analyzeSkew)
			if float64(s4) > 1.5*float64(s1) {
				t.Errorf("the stream holds %d bytes after %d events, %d after %d: it grows with the events", s1, n, s4, 4*n)
			}
			a1, a4 := retainedHeap(t, one, -1), retainedHeap(t, four, -1)
			if float64(a4) < 2*float64(a1) {
				t.Errorf("keeping every record holds %d bytes after %d events, %d after %d: the measure misses growth", a1, n, a4, 4*n)
			}
			t.Logf("retained heap, %d / %d events: stream %d / %d bytes, every record kept %d / %d", n, 4*n, s1, s4, a1, a4)
			if !level.rr {
				return
			}
			sources, err := audit.Open(four, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Analyze(context.Background(), sources, NewConfig())
			if err != nil {
				t.Fatal(err)
			}
			want := referenceReport(t, sources, NewConfig())
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-reference +stream):\n%s", diff)
			}
		})
	}
}

// BenchmarkAnalyzeEvents decodes and analyses 200,000 events of 30
// writers on 2,000 objects, and reports the bytes allocated per event.
func BenchmarkAnalyzeEvents(b *testing.B) {
	const n = 200000
	sources, err := audit.Open(writeManyLog(b, n, 2000, 30, 70), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func(f func()) { onFallback = f }(onFallback)
	onFallback = func() { b.Fatal("the generated log was read again keeping every record") }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if _, err := Analyze(context.Background(), sources, NewConfig()); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/n, "B/event")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/event")
}

// TestSettledByVersionThenNoResult: a RequestResponse-level object whose
// 409s the stream settled by version (more than maxPending of them) gets,
// at the end of the log, a success without a resulting version (a delete
// answered with a Status, say): its winners are then by time, which the
// stream finds by reading the log again, keeping every record.
func TestSettledByVersionThenNoResult(t *testing.T) {
	const n = 20000
	path := writeManyLogAt(t, n, 5, 10, 70, true)
	end := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC).Add(n * time.Millisecond)
	line := fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-end","stage":"ResponseComplete",`+
		`"requestURI":"/api/v1/namespaces/app/configmaps/config-0","verb":"delete","user":{"username":"system:serviceaccount:team:ctrl-0"},`+
		`"objectRef":{"resource":"configmaps","namespace":"app","name":"config-0","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},`+
		`"requestReceivedTimestamp":%q,"stageTimestamp":%q}`+"\n", end.Format(time.RFC3339Nano), end.Add(time.Millisecond).Format(time.RFC3339Nano))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sources, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fellBack := false
	defer func(f func()) { onFallback = f }(onFallback)
	onFallback = func() { fellBack = true }
	got, err := Analyze(context.Background(), sources, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !fellBack {
		t.Error("the stream kept its answers by version for config-0")
	}
	want := referenceReport(t, sources, NewConfig())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-reference +stream):\n%s", diff)
	}
	if want.Summary.Conflicts < 5*maxPending {
		t.Errorf("%d 409s: the log does not test settling by version", want.Summary.Conflicts)
	}
}

// TestLimitMemoryTurnsGCPercentOff: under the limit the collector runs
// when the heap nears it (GC percent off), and both are put back after.
func TestLimitMemoryTurnsGCPercentOff(t *testing.T) {
	// Neither GOGC nor GOMEMLIMIT (either makes LimitMemory leave its
	// setting alone); t.Setenv puts them back.
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	restore := LimitMemory(64 << 20)
	limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(-1)
	restore()
	if limit != 64<<20 || percent != -1 {
		t.Errorf("under LimitMemory: limit %d, GC percent %d; want %d, -1", limit, percent, 64<<20)
	}
	if limit, percent := debug.SetMemoryLimit(-1), debug.SetGCPercent(100); limit != math.MaxInt64 || percent != 100 {
		t.Errorf("after restore: limit %d, GC percent %d; want %d, 100", limit, percent, int64(math.MaxInt64))
	}
}
