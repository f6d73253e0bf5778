// Command genaudit writes a synthetic kube-apiserver audit log (JSON lines
// of audit.k8s.io/v1 Event at Metadata level) for benchmarking kubectl rv
// conflicts. Its events copy the shape of real ones from the test control
// plane (hack/local-cluster.sh, kube-apiserver 1.36.3): gets, lists, watches
// (ResponseStarted and ResponseComplete), updates and patches of ConfigMaps
// with a field manager, from service-account pods, some of them 409s, and
// Lease renewals.
//
//	go run ./hack/genaudit -size 1GiB -out /tmp/audit-1g.log
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	size := flag.String("size", "100MiB", "stop after this many bytes (KiB, MiB, GiB suffixes)")
	out := flag.String("out", "", "file to write (required)")
	objects := flag.Int("objects", 20000, "ConfigMaps written")
	writers := flag.Int("writers", 300, "writers (service accounts x pods)")
	conflictPct := flag.Int("conflict-percent", 8, "percent of updates answered 409")
	seed := flag.Uint64("seed", 1, "random seed")
	start := flag.String("start", "2026-11-24T10:00:00Z", "time of the first event (RFC 3339); give later ones for rotated files")
	level := flag.String("level", "Metadata", "audit level: Metadata, or RequestResponse (successful writes carry responseObject.metadata.resourceVersion; request bodies are left out)")
	flag.Parse()
	limit, err := parseSize(*size)
	t0, terr := time.Parse(time.RFC3339, *start)
	if err != nil || terr != nil || *out == "" || *level != "Metadata" && *level != "RequestResponse" {
		fmt.Fprintln(os.Stderr, "usage: genaudit -size 1GiB -out FILE [-start 2026-11-24T10:00:00Z]")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := &gen{rnd: rand.New(rand.NewPCG(*seed, 2)), objects: *objects, writers: *writers, conflictPct: *conflictPct,
		t: t0, level: *level}
	var n int64
	var events int
	for n < limit {
		b := g.next()
		if _, err := w.Write(b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		n += int64(len(b))
		events++
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genaudit: %d events, %d bytes in %s, last at %s\n", events, n, *out, g.t.Format(time.RFC3339Nano))
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v * mult, err
}

type gen struct {
	rnd                           *rand.Rand
	objects, writers, conflictPct int
	t                             time.Time
	id                            uint64
	buf                           []byte
	// level is the audit level; at RequestResponse a successful write's
	// resulting resourceVersion is the event's number.
	level string
}

const eventFmt = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"%s","auditID":"%08x-85a1-42b9-bcbe-%012x","stage":"%s","requestURI":"%s","verb":"%s","user":{"username":"system:serviceaccount:%s:%s","uid":"%08x-1d2c-4b6a-9d61-0c1b2a3f4e5d","groups":["system:serviceaccounts","system:serviceaccounts:%s","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=%08x-7c1e-4f0a-b3c2-5d6e7f8091a2"],"authentication.kubernetes.io/node-name":["node-%d"],"authentication.kubernetes.io/pod-name":["%s"],"authentication.kubernetes.io/pod-uid":["%08x-aaaa-bbbb-cccc-ddddeeeeffff"]}},"sourceIPs":["10.0.%d.%d"],"userAgent":"manager/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{%s},"responseStatus":%s%s,"requestReceivedTimestamp":"%s","stageTimestamp":"%s","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"%s\" of ClusterRole \"%s\" to ServiceAccount \"%s/%s\""}}` + "\n"

const conflictStatus = `{"metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"%s\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"%s","kind":"configmaps"},"code":409}`

// next returns one event line.
func (g *gen) next() []byte {
	g.id++
	g.t = g.t.Add(time.Duration(50+g.rnd.IntN(100)) * time.Microsecond)
	wi := g.rnd.IntN(g.writers)
	sa := fmt.Sprintf("controller-%d", wi/3)
	ns := fmt.Sprintf("team-%d", wi%40)
	pod := fmt.Sprintf("%s-6f9c%d-x%dz", sa, wi/3, wi%3)
	obj := g.rnd.IntN(g.objects)
	name := fmt.Sprintf("config-%d", obj)
	objNS := fmt.Sprintf("app-%d", obj%200)
	base := "/api/v1/namespaces/" + objNS + "/configmaps/" + name
	ref := fmt.Sprintf(`"resource":"configmaps","namespace":"%s","name":"%s","apiVersion":"v1"`, objNS, name)
	stage, verb, uri, status := "ResponseComplete", "get", base, `{"metadata":{},"code":200}`
	switch r := g.rnd.IntN(100); {
	case r < 40:
	case r < 48:
		verb, uri, ref = "list", "/api/v1/namespaces/"+objNS+"/configmaps?limit=500", `"resource":"configmaps","namespace":"`+objNS+`","apiVersion":"v1"`
	case r < 54:
		stage, verb, uri, ref = []string{"ResponseStarted", "ResponseComplete"}[g.rnd.IntN(2)], "watch", "/api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=1234&timeout=7m9s&timeoutSeconds=429&watch=true", `"resource":"configmaps","apiVersion":"v1"`
	case r < 64:
		verb, uri = "update", "/apis/coordination.k8s.io/v1/namespaces/"+ns+"/leases/"+sa
		ref = fmt.Sprintf(`"resource":"leases","namespace":"%s","name":"%s","uid":"%08x-d85d-4c93-8b90-5507a2125aa9","apiGroup":"coordination.k8s.io","apiVersion":"v1","resourceVersion":"%d"`, ns, sa, wi, g.id)
	default:
		verb = []string{"update", "update", "patch"}[g.rnd.IntN(3)]
		uri = base + "?fieldManager=" + sa
		if verb == "update" {
			ref += fmt.Sprintf(`,"uid":"%08x-bd90-4f5b-830b-6403e5eb1ec0","resourceVersion":"%d"`, obj, g.id-uint64(g.rnd.IntN(1000)))
		}
		if g.rnd.IntN(100) < g.conflictPct {
			status = fmt.Sprintf(conflictStatus, name, name)
		}
	}
	resp := ""
	if g.level == "RequestResponse" && verb != "get" && verb != "list" && verb != "watch" && !strings.Contains(status, `"code":409`) {
		resp = fmt.Sprintf(`,"responseObject":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"%d"}}`, g.id)
	}
	recv := g.t.Format("2006-01-02T15:04:05.000000Z")
	done := g.t.Add(time.Duration(1000+g.rnd.IntN(4000)) * time.Microsecond).Format("2006-01-02T15:04:05.000000Z")
	g.buf = fmt.Appendf(g.buf[:0], eventFmt, g.level, g.id, g.id, stage, uri, verb, ns, sa, wi, ns, wi, wi%50, pod, wi,
		wi%250, wi%200, ref, status, resp, recv, done, sa, sa, ns, sa)
	return g.buf
}
