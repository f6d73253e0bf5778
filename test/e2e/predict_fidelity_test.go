//go:build e2e

package e2e

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"

	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"

	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// fidelitySeed fixes the corpus; PREDICT_FIDELITY_SEED overrides it to
// explore other corpora.
const fidelitySeed = 20261121

// fidelityCases is the corpus size (at least 1,000).
const fidelityCases = 1000

var (
	predictCMGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	predictDeployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// fidelityCase is one generated case: how the object was written, and the
// desired change to predict.
type fidelityCase struct {
	ID      int
	Kind    string
	Writes  []string
	Desired string
	RV      string
	Manager string
	// EmptyWrite and EmptyDesired say an applier wrote an empty map, or
	// the desired change has one.
	EmptyWrite, EmptyDesired bool
	// Ports and PortPairs say the live object or the desired change has
	// container ports, and a container with the same containerPort on TCP
	// and UDP.
	Ports, PortPairs bool
	// Invalid says how the desired manifest was made one the server's
	// validation refuses; "" when it was not.
	Invalid string
}

// String describes the case for a disagreement.
func (c fidelityCase) String() string {
	return fmt.Sprintf("case %d (%s, writes %s, desired %s, rv %s, manager %s)", c.ID, c.Kind, strings.Join(c.Writes, ","), c.Desired, c.RV, c.Manager)
}

// TestPredictFidelity generates a randomized corpus of objects (ConfigMaps,
// Deployments, Services (see svcCorpus), Jobs, CronJobs, HPAs, Ingresses,
// PDBs and Leases (see kindsCorpus) and, a quarter, custom resources of
// two CRDs (see crCorpus)) written by 1 to 4 managers with update and
// apply, then a random desired change with a fresh, stale or no
// resourceVersion and list edits, an eighth of Deployments' and Services'
// made invalid (see invalidate), and checks that the
// offline engine predicts for every method what the real API server's dry
// run answers: the verdict, the conflicting fields and their owners, and
// the clobbered fields and whose they were. Then it makes one method's
// write for real (picked at random from a second generator, so the corpus
// stays that of the seed) and checks that both engines predicted what the
// persisted write did: the server engine's dry run is itself a prediction.
func TestPredictFidelity(t *testing.T) {
	seed := int64(fidelitySeed)
	if s := os.Getenv("PREDICT_FIDELITY_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	ns := cluster.Namespace(t)
	// The deployment controller would change objects between the dry runs
	// and the offline prediction.
	cluster.PauseControllers(t)
	// The server warns of what the corpus does on purpose (the same port
	// in two containers): thousands of lines that would bury the figures.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	t.Cleanup(func() { rest.SetDefaultWarningHandler(rest.WarningLogger{}) })
	dyn := cluster.Dynamic(t, "fidelity")
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	pick := rand.New(rand.NewSource(seed + 1))
	patches := rand.New(rand.NewSource(seed + 2))
	// Container ports are drawn from a generator of their own, so that the
	// other fields of a seed's cases stay those its earlier corpus had.
	ports := rand.New(rand.NewSource(seed + 5))
	offline := offlineEngine(nil)
	realServer, realOffline := agreement{}, agreement{}

	var total, agreeVerdict, agreeConflicts, agreeClobber, methods int
	byVerdict := map[predict.Verdict]int{}
	// byPatch counts the server's verdicts on given patches, per type.
	byPatch := map[string]int{}
	// Cases with an empty map written by an applier, or in the desired change.
	var emptyWrites, emptyDesired int
	// Cases with container ports, and with the same port on TCP and UDP.
	var withPorts, withPortPairs int
	// byKind counts, per kind, the method predictions and those where the
	// offline engine agreed with the server on all three.
	byKind := agreement{}
	var disagreements []string
	crs := newCRCorpus(t, dyn, ns, seed)
	apps := newAppCorpus(t, dyn, ns, seed)
	// unknowns counts, per kind, the offline engine's unknown verdicts
	// (not compared with the server's: it says it cannot know).
	unknowns := map[string]int{}
	// bare counts the custom resource predictions made again without the
	// CRD.
	var bare withoutSchema
	// reasons counts the invalid verdicts of custom resources on which both
	// engines agree, and those whose reason (the server's text) is the same.
	var crInvalid, crInvalidSameText int
	svcs := newSvcCorpus(dyn, ns, seed)
	kinds := newKindsCorpus(dyn, seed)
	// invalid draws which desired manifests are made invalid, and how.
	invalid := rand.New(rand.NewSource(seed + 7))
	// invalidCases counts them, and the server's verdicts on them.
	invalidCases, invalidVerdicts := 0, map[predict.Verdict]int{}
	// builtinCases numbers the ConfigMap and Deployment cases: their own
	// sequence, as before custom resources joined the corpus.
	builtinCases := 0
	for i := 0; i < fidelityCases; i++ {
		var c fidelityCase
		var live *unstructured.Unstructured
		var in predict.Input
		var ri dynamic.ResourceInterface
		cfg := predict.Config{DefaultManager: "kubectl-rv"}
		engine, realPick := offline, pick
		custom := false
		var bareEngine *predict.Offline
		if apps.next() {
			c, live, in = apps.build(t, ctx, ns, i)
			ri = apps.ri
			cfg.TypeConverter = apps.tc
			engine, realPick, custom = apps.offline, apps.pick, true
		} else if crs.next() {
			custom = true
			var cr crCase
			c, cr, live, in = crs.build(t, ctx, ns, i)
			ri = crs.ri(cr.kind.gvr)
			cfg.TypeConverter = cr.tc
			engine, realPick, bareEngine = cr.offline, crs.pick, cr.bare
		} else if svcs.next() {
			c, live, in = svcs.build(t, ctx, ns, i, invalid)
			ri = svcs.ri
		} else if kinds.next() {
			c, live, in, ri = kinds.build(t, ctx, ns, i)
		} else {
			c, live, in = buildCase(t, ctx, dyn, rng, patches, ports, invalid, ns, builtinCases)
			builtinCases++
			gvr := predictCMGVR
			if c.Kind == "Deployment" {
				gvr = predictDeployGVR
			}
			ri = dyn.Resource(gvr).Namespace(ns)
		}
		c.ID = i
		cfg.FieldManager = c.Manager
		srv, err := predict.Predict(ctx, cfg, in, predict.Server(ri, live.GetName()))
		if err != nil {
			t.Fatalf("case %d: server: %v", i, err)
		}
		after, err := ri.Get(ctx, live.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if after.GetResourceVersion() != live.GetResourceVersion() {
			t.Fatalf("case %d: the object changed during the dry runs (%s -> %s): a dry run persisted or a controller ran", i, live.GetResourceVersion(), after.GetResourceVersion())
		}
		ex, err := engine.Executor(live.GroupVersionKind(), live.GetName(), live)
		if err != nil {
			t.Fatal(err)
		}
		off, err := predict.Predict(ctx, cfg, in, ex)
		if err != nil {
			t.Fatalf("case %d: offline: %v", i, err)
		}
		total++
		if c.EmptyWrite {
			emptyWrites++
		}
		if c.EmptyDesired {
			emptyDesired++
		}
		if c.Ports {
			withPorts++
		}
		if c.PortPairs {
			withPortPairs++
		}
		if c.Invalid != "" {
			invalidCases++
			for _, sm := range srv.Methods {
				invalidVerdicts[sm.Verdict]++
			}
		}
		if in.Patch != nil {
			for _, sm := range srv.Methods {
				byPatch[fmt.Sprintf("%s:%s", in.PatchType, sm.Verdict)]++
			}
		}
		if bareEngine != nil {
			wrong, err := bare.check(ctx, cfg, in, live, bareEngine, srv)
			if err != nil {
				t.Fatalf("case %d: offline without the CRD: %v", i, err)
			}
			for _, w := range wrong {
				disagreements = append(disagreements, fmt.Sprintf("%s %s", c, w))
			}
		}
		if d := checkRealWrite(t, ctx, cfg, in, ri, live.GetName(), srv, off, realPick, c.Kind, realServer, realOffline); d != "" {
			disagreements = append(disagreements, fmt.Sprintf("%s %s", c, d))
		}
		for j, sm := range srv.Methods {
			om := off.Methods[j]
			methods++
			byVerdict[sm.Verdict]++
			if om.Verdict == predict.Unknown {
				unknowns[c.Kind]++
				byKind.add(c.Kind, false)
				continue
			}
			if custom && sm.Verdict == predict.Invalid && om.Verdict == predict.Invalid {
				crInvalid++
				if sm.Reason == om.Reason {
					crInvalidSameText++
				} else {
					disagreements = append(disagreements, fmt.Sprintf("%s %s: the reasons differ:\n  server  %s\n  offline %s", c, sm.Method, sm.Reason, om.Reason))
				}
			}
			okV := sm.Verdict == om.Verdict
			okC := conflictKey(sm) == conflictKey(om)
			okB := clobberKey(sm) == clobberKey(om)
			if okV {
				agreeVerdict++
			}
			if okC {
				agreeConflicts++
			}
			if okB {
				agreeClobber++
			}
			byKind.add(c.Kind, okV && okC && okB)
			if !okV || !okC || !okB {
				disagreements = append(disagreements, fmt.Sprintf("%s %s:\n  server  %s %s %s %s\n  offline %s %s %s %s",
					c, sm.Method,
					sm.Verdict, conflictKey(sm), clobberKey(sm), sm.Reason, om.Verdict, conflictKey(om), clobberKey(om), om.Reason))
			}
		}
	}
	pct := func(n int) string { return fmt.Sprintf("%d/%d (%.1f%%)", n, methods, 100*float64(n)/float64(methods)) }
	t.Logf("fidelity (seed %d): %d cases, %d method predictions (server verdicts: %s)", seed, total, methods, joinCounts(byVerdict))
	t.Logf("agreement: verdict %s, apply conflicts (fields and owners) %s, clobbered fields and owners %s", pct(agreeVerdict), pct(agreeConflicts), pct(agreeClobber))
	t.Logf("offline agreement with the server on all three, per kind: %s", byKind)
	t.Logf("given patches (type:server verdict): %s", joinCounts(byPatch))
	t.Logf("empty maps: applied by a writer in %d cases, in the desired change in %d", emptyWrites, emptyDesired)
	t.Logf("container ports: in %d cases, the same containerPort on TCP and UDP in %d", withPorts, withPortPairs)
	t.Logf("Services: the desired change changes the type in %d cases, the session affinity in %d", svcs.Types, svcs.Affinity)
	t.Logf("desired manifests made invalid: %d cases (server verdicts: %s)", invalidCases, joinCounts(invalidVerdicts))
	t.Logf("Jobs, CronJobs, HPAs, Ingresses, PDBs and Leases: %d desired changes touch an immutable field, %d are made invalid", kinds.Immutable, kinds.Invalid)
	t.Logf("Appliances: desired changes made invalid or pruned: %s", joinCounts(apps.Invalid))
	t.Logf("offline unknown verdicts (not compared), per kind: %s", joinCounts(unknowns))
	t.Logf("custom resources predicted again without their CRD: %d method predictions, %d unknown (the reason names --schema), the rest the server's", bare.methods, bare.unknown)
	// #29's bar: at least 99.5% agreement, every disagreement an unknown.
	nUnknown := 0
	for _, n := range unknowns {
		nUnknown += n
	}
	if nUnknown*200 > methods {
		t.Errorf("%d of %d method predictions are unknown: more than 0.5%%", nUnknown, methods)
	}
	t.Logf("custom resources refused by both engines: the server's text in %d/%d", crInvalidSameText, crInvalid)
	t.Logf("one real write per case: the server engine predicted it on all three in %s; the offline engine in %s", realServer, realOffline)
	for _, d := range disagreements {
		t.Errorf("disagreement: %s", d)
	}
}

// joinCounts lists counts as "key=n", sorted by key.
func joinCounts[K ~string](m map[K]int) string {
	parts := make([]string, 0, len(m))
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// agreement counts, per kind, the predictions checked and those that
// agreed on all three (verdict, conflicts, clobbers).
type agreement map[string]*[2]int

func (a agreement) add(kind string, ok bool) {
	k := a[kind]
	if k == nil {
		k = &[2]int{}
		a[kind] = k
	}
	k[0]++
	if ok {
		k[1]++
	}
}

func (a agreement) String() string {
	parts := make([]string, 0, len(a))
	for kind, k := range a {
		parts = append(parts, fmt.Sprintf("%s %d/%d (%.1f%%)", kind, k[1], k[0], 100*float64(k[1])/float64(k[0])))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// persisting is an executor that makes the writes for real (no dry run):
// the truth both engines' predictions are checked against.
type persisting struct {
	ri   dynamic.ResourceInterface
	name string
}

func (e persisting) Engine() string { return "real" }

func (e persisting) Live(ctx context.Context) (*unstructured.Unstructured, error) {
	return e.ri.Get(ctx, e.name, metav1.GetOptions{})
}

func (e persisting) Update(ctx context.Context, obj *unstructured.Unstructured, w predict.Write) (*unstructured.Unstructured, error) {
	return e.ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: w.Manager, FieldValidation: w.FieldValidation})
}

func (e persisting) Patch(ctx context.Context, pt types.PatchType, data []byte, w predict.Write) (*unstructured.Unstructured, error) {
	opts := metav1.PatchOptions{FieldManager: w.Manager, FieldValidation: w.FieldValidation}
	if pt == types.ApplyPatchType {
		opts.Force = &w.Force
	}
	return e.ri.Patch(ctx, e.name, pt, data, opts)
}

func (e persisting) Create(ctx context.Context, obj *unstructured.Unstructured, w predict.Write) (*unstructured.Unstructured, error) {
	return e.ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: w.Manager, FieldValidation: w.FieldValidation})
}

// checkRealWrite makes one method's write, picked at random, for real and
// counts whether each engine predicted it; it returns a description of
// any disagreement.
func checkRealWrite(t *testing.T, ctx context.Context, cfg predict.Config, in predict.Input, ri dynamic.ResourceInterface, name string, srv, off predict.Result, pick *rand.Rand, kind string, realServer, realOffline agreement) string {
	t.Helper()
	j := pick.Intn(len(srv.Methods))
	cfg.Methods = []predict.Method{srv.Methods[j].Method}
	got, err := predict.Predict(ctx, cfg, in, persisting{ri: ri, name: name})
	if err != nil {
		t.Fatalf("the real %s write: %v", cfg.Methods[0], err)
	}
	rm := got.Methods[0]
	same := func(m predict.MethodResult) bool {
		return m.Verdict == rm.Verdict && conflictKey(m) == conflictKey(rm) && clobberKey(m) == clobberKey(rm)
	}
	sm, om := srv.Methods[j], off.Methods[j]
	realServer.add(kind, same(sm))
	if om.Verdict != predict.Unknown {
		realOffline.add(kind, same(om))
	}
	if same(sm) && (same(om) || om.Verdict == predict.Unknown) {
		return ""
	}
	return fmt.Sprintf("%s, the real write:\n  real    %s %s %s %s\n  server  %s %s %s %s\n  offline %s %s %s %s", rm.Method,
		rm.Verdict, conflictKey(rm), clobberKey(rm), rm.Reason, sm.Verdict, conflictKey(sm), clobberKey(sm), sm.Reason, om.Verdict, conflictKey(om), clobberKey(om), om.Reason)
}

func conflictKey(m predict.MethodResult) string {
	var parts []string
	for _, c := range m.Conflicts {
		parts = append(parts, c.Field+"@"+c.Manager+"/"+c.Operation+"/"+c.Subresource)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func clobberKey(m predict.MethodResult) string {
	var parts []string
	for _, c := range m.Clobbered {
		parts = append(parts, c.Manager+"/"+c.Operation+":"+strings.Join(c.Fields, ","))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var fidelityManagers = []string{"alpha", "bravo", "charlie", "delta"}

// buildCase writes one object through 1-4 managers and returns the desired
// change to predict.
func buildCase(t *testing.T, ctx context.Context, dyn dynamic.Interface, rng, patches, ports, invalid *rand.Rand, ns string, i int) (fidelityCase, *unstructured.Unstructured, predict.Input) {
	t.Helper()
	c := fidelityCase{ID: i, Kind: "ConfigMap"}
	if rng.Intn(5) < 2 {
		c.Kind = "Deployment"
	}
	name := fmt.Sprintf("f%03d", i)
	gvr := predictCMGVR
	if c.Kind == "Deployment" {
		gvr = predictDeployGVR
	}
	ri := dyn.Resource(gvr).Namespace(ns)
	live, rvs, nManagers := writeByManagers(t, ctx, ri, rng, i, name, func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return writeBuiltin(ctx, ri, rng, patches, ports, &c, name, ns, mgr, cur)
	})

	in, desired := drawChange(changeDraw{rng: rng, patches: patches, emptyOneIn: 8,
		seed:   func() *unstructured.Unstructured { return seedObject(rng, ports, c.Kind, name, ns, "writer") },
		mutate: func(u *unstructured.Unstructured, rmw bool) { mutate(rng, ports, c.Kind, u, rmw) },
		invalid: func(u *unstructured.Unstructured) string {
			if c.Kind != "Deployment" {
				return ""
			}
			return invalidate(invalid, c.Kind, u)
		},
		given: func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
			return givenPatch(patches, ports, c.Kind, live, desired, rv)
		},
	}, &c, live, rvs, nManagers, ns, name)
	c.Ports, c.PortPairs = portsIn(live)
	if p, pairs := portsIn(desired); p {
		c.Ports, c.PortPairs = true, c.PortPairs || pairs
	}
	return c, live, in
}

// writeByManagers has 1 to 4 managers write a case's object in turn, the
// first one again, sometimes: write makes one write by mgr over cur (nil
// before the first) and returns what it stored. It returns the object as
// the writes left it, the resourceVersion of each write, and how many
// managers there were.
func writeByManagers(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, rng *rand.Rand, i int, name string,
	write func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, []string, int) {
	t.Helper()
	nManagers := 1 + rng.Intn(4)
	var rvs []string
	var cur *unstructured.Unstructured
	for w := 0; w < nManagers+rng.Intn(2); w++ {
		mgr := fidelityManagers[w%nManagers]
		obj, err := write(mgr, cur)
		if err != nil {
			t.Fatalf("case %d: write %d by %s: %v", i, w, mgr, err)
		}
		cur = obj
		rvs = append(rvs, obj.GetResourceVersion())
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return live, rvs, nManagers
}

// writeBuiltin makes one write of a ConfigMap or Deployment by mgr over
// cur: a create or apply first, then applies (forced or not, a sixth of
// them owning annotations: {}), read-modify-write updates and, for
// Deployments, controller-like writes through /scale and /status.
func writeBuiltin(ctx context.Context, ri dynamic.ResourceInterface, rng, patches, ports *rand.Rand, c *fidelityCase, name, ns, mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	useApply := rng.Intn(2) == 0
	var obj *unstructured.Unstructured
	var err error
	if cur != nil && c.Kind == "Deployment" && rng.Intn(4) == 0 {
		// A controller-like write through a subresource.
		if rng.Intn(2) == 0 {
			c.Writes = append(c.Writes, mgr+":scale")
			var sc *unstructured.Unstructured
			if sc, err = ri.Get(ctx, name, metav1.GetOptions{}, "scale"); err == nil {
				_ = unstructured.SetNestedField(sc.Object, int64(1+rng.Intn(6)), "spec", "replicas")
				if _, err = ri.Update(ctx, sc, metav1.UpdateOptions{FieldManager: mgr}, "scale"); err == nil {
					obj, err = ri.Get(ctx, name, metav1.GetOptions{})
				}
			}
			return obj, err
		}
		c.Writes = append(c.Writes, mgr+":status")
		next := cur.DeepCopy()
		_ = unstructured.SetNestedField(next.Object, int64(rng.Intn(3)), "status", "replicas")
		_ = unstructured.SetNestedField(next.Object, next.GetGeneration(), "status", "observedGeneration")
		return ri.UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
	}
	if cur != nil && !useApply {
		next := cur.DeepCopy()
		mutate(rng, ports, c.Kind, next, true)
		c.Writes = append(c.Writes, mgr+":update")
		return ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
	}
	cfgObj := seedObject(rng, ports, c.Kind, name, ns, mgr)
	if cur != nil {
		mutate(rng, ports, c.Kind, cfgObj, false)
	}
	if cur == nil && !useApply {
		c.Writes = append(c.Writes, mgr+":create")
		return ri.Create(ctx, cfgObj, metav1.CreateOptions{FieldManager: mgr})
	}
	force := rng.Intn(3) > 0
	c.Writes = append(c.Writes, fmt.Sprintf("%s:apply(force=%v)", mgr, force))
	if patches.Intn(6) == 0 {
		// An applier that owns an empty map, which the server drops from
		// the object (issue 15, defect 3).
		cfgObj.SetAnnotations(map[string]string{})
		c.Writes[len(c.Writes)-1] += "+annotations{}"
		c.EmptyWrite = true
	}
	b, _ := json.Marshal(cfgObj.Object)
	obj, err = ri.Patch(ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: mgr, Force: &force})
	if err != nil && !force {
		// A conflicting apply without force leaves the object as it was.
		return cur, nil
	}
	return obj, err
}

// changeDraw says how drawChange draws a case's desired change: rng draws
// the change, patches its empty map and whether it is given as a patch;
// seed makes a fresh manifest, mutate edits the desired object (rmw: a
// read-modify-write copy), invalid (when set) sometimes makes it one the
// server refuses and says how, given makes a patch of the change.
type changeDraw struct {
	rng, patches *rand.Rand
	// emptyOneIn: one desired change in emptyOneIn has an empty map.
	emptyOneIn int
	seed       func() *unstructured.Unstructured
	mutate     func(u *unstructured.Unstructured, rmw bool)
	invalid    func(u *unstructured.Unstructured) string
	given      func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte)
}

// drawChange draws case c's desired change from live: a read-modify-write
// copy or a fresh manifest, edited once or twice, with a fresh, stale (the
// first write's, rvs[0]) or no resourceVersion, by the writer or one of
// the case's nManagers managers, sometimes with an empty map (the server
// drops it), and a quarter of the time given as a patch of one type, as a
// user would write it by hand. It returns the input and the desired object.
func drawChange(d changeDraw, c *fidelityCase, live *unstructured.Unstructured, rvs []string, nManagers int, ns, name string) (predict.Input, *unstructured.Unstructured) {
	rng := d.rng
	var desired *unstructured.Unstructured
	if rng.Intn(2) == 0 {
		c.Desired = "read-modify-write"
		desired = live.DeepCopy()
		desired.SetManagedFields(nil)
	} else {
		c.Desired = "manifest"
		desired = d.seed()
	}
	for n := 1 + rng.Intn(2); n > 0; n-- {
		d.mutate(desired, c.Desired == "read-modify-write")
	}
	if d.invalid != nil {
		if what := d.invalid(desired); what != "" {
			c.Invalid = what
			c.Desired += " (" + what + ")"
		}
	}
	switch rng.Intn(3) {
	case 0:
		c.RV = live.GetResourceVersion()
	case 1:
		c.RV = rvs[0]
		if c.RV == live.GetResourceVersion() {
			c.RV = "1"
		}
	default:
		c.RV = ""
	}
	desired.SetResourceVersion(c.RV)
	c.Manager = "writer"
	if rng.Intn(4) == 0 {
		c.Manager = fidelityManagers[rng.Intn(nManagers)]
	}
	if d.patches.Intn(d.emptyOneIn) == 0 {
		c.EmptyDesired = true
		if d.patches.Intn(2) == 0 {
			desired.SetLabels(map[string]string{})
			c.Desired += " with labels {}"
		} else {
			desired.SetAnnotations(map[string]string{})
			c.Desired += " with annotations {}"
		}
	}
	ref := predict.ObjectRef{APIVersion: live.GetAPIVersion(), Kind: live.GetKind(), Namespace: ns, Name: name}
	if d.patches.Intn(4) == 0 {
		pt, data := d.given(live, desired, c.RV)
		c.Desired += "; given " + string(pt) + " patch " + string(data)
		return predict.Input{Ref: ref, Patch: data, PatchType: pt, BaseRV: c.RV}, desired
	}
	return predict.Input{Ref: ref, Desired: desired}, desired
}

// givenPatch returns a patch of a random type that makes (part of) the
// change from live to desired, as a user would write it by hand: the
// labels and data of a ConfigMap, the labels, replicas and containers of a
// Deployment (and, drawn from ports, a strategic merge patch of the
// containers' ports); a JSON patch tests the resourceVersion first when rv
// is set.
func givenPatch(rng, ports *rand.Rand, kind string, live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
	pt := []predict.PatchType{predict.PatchJSON, predict.PatchMerge, predict.PatchStrategic, predict.PatchApply}[rng.Intn(4)]
	if pt == predict.PatchApply {
		b, _ := json.Marshal(desired.Object)
		return pt, b
	}
	if pt == predict.PatchJSON {
		return pt, givenJSONPatch(rng, ports, kind, live, desired, rv)
	}
	// Merge and strategic: the desired labels, and a removed one as null.
	patch := map[string]any{"metadata": map[string]any{"labels": patchLabels(rng, live, desired)}}
	if kind == "ConfigMap" {
		data, _, _ := unstructured.NestedMap(desired.Object, "data")
		liveData, _, _ := unstructured.NestedMap(live.Object, "data")
		for k := range liveData {
			if _, ok := data[k]; !ok {
				data[k] = nil
			}
		}
		patch["data"] = data
	} else {
		spec := map[string]any{}
		if r, ok, _ := unstructured.NestedInt64(desired.Object, "spec", "replicas"); ok {
			spec["replicas"] = r
		}
		if rng.Intn(2) == 0 {
			// A merge patch replaces the list; a strategic one merges
			// it by container name.
			containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
			spec["template"] = map[string]any{"spec": map[string]any{"containers": containers}}
		}
		if pt == predict.PatchStrategic && ports.Intn(3) == 0 {
			// The containers' ports, merged by containerPort.
			spec["template"] = givenPortsPatch(ports, live, desired)
		}
		patch["spec"] = spec
	}
	b, _ := json.Marshal(patch)
	return pt, b
}

// patchLabels returns the labels of a merge or strategic merge patch from
// live to desired: desired's, and half of those it removes (drawn from
// rng) as null.
func patchLabels(rng *rand.Rand, live, desired *unstructured.Unstructured) map[string]any {
	labels := map[string]any{}
	for k, v := range desired.GetLabels() {
		labels[k] = v
	}
	for k := range live.GetLabels() {
		if _, ok := labels[k]; !ok && rng.Intn(2) == 0 {
			labels[k] = nil
		}
	}
	return labels
}

// givenJSONPatch returns RFC 6902 operations for part of the change.
func givenJSONPatch(rng, ports *rand.Rand, kind string, live, desired *unstructured.Unstructured, rv string) []byte {
	ops := []map[string]any{}
	if rv != "" && rng.Intn(2) == 0 {
		ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
	}
	labels := desired.GetLabels()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if live.GetLabels()[k] != labels[k] {
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + k, "value": labels[k]})
		}
	}
	if kind == "ConfigMap" {
		data, _, _ := unstructured.NestedMap(desired.Object, "data")
		liveData, _, _ := unstructured.NestedMap(live.Object, "data")
		if liveData == nil {
			// /data/k cannot be added to a missing map: add the map.
			if len(data) > 0 {
				ops = append(ops, map[string]any{"op": "add", "path": "/data", "value": data})
			}
		} else {
			for _, k := range slices.Sorted(maps.Keys(data)) {
				if liveData[k] != data[k] {
					ops = append(ops, map[string]any{"op": "add", "path": "/data/" + k, "value": data[k]})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(liveData)) {
				if _, ok := data[k]; !ok {
					ops = append(ops, map[string]any{"op": "remove", "path": "/data/" + k})
				}
			}
		}
	} else {
		if r, ok, _ := unstructured.NestedInt64(desired.Object, "spec", "replicas"); ok {
			ops = append(ops, map[string]any{"op": "replace", "path": "/spec/replicas", "value": r})
		}
		containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
		liveContainers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
		for i := range min(len(containers), len(liveContainers)) {
			if img := containers[i].(map[string]any)["image"]; img != liveContainers[i].(map[string]any)["image"] {
				ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/template/spec/containers/%d/image", i), "value": img})
			}
		}
		ops = append(ops, givenPortsOps(ports, live, desired)...)
	}
	b, _ := json.Marshal(ops)
	return b
}

// seedMeta returns an object of the corpus with its name and labels: app
// and, half of the time (drawn from rng), one that names the manager mgr.
func seedMeta(rng *rand.Rand, apiVersion, kind, name, ns, mgr string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	u.SetNamespace(ns)
	labels := map[string]string{"app": name}
	if rng.Intn(2) == 0 {
		labels["owner-"+mgr] = "yes"
	}
	u.SetLabels(labels)
	return u
}

// seedObject returns a small object whose content depends on rng: a
// ConfigMap with data and labels, or a Deployment with 1-3 containers,
// whose ports are drawn from ports.
func seedObject(rng, ports *rand.Rand, kind, name, ns, mgr string) *unstructured.Unstructured {
	if kind == "ConfigMap" {
		u := seedMeta(rng, "v1", kind, name, ns, mgr)
		data := map[string]any{}
		for k := 0; k < 1+rng.Intn(4); k++ {
			data[fmt.Sprintf("k%d", rng.Intn(6))] = fmt.Sprintf("v%d", rng.Intn(3))
		}
		u.Object["data"] = data
		return u
	}
	u := seedMeta(rng, "apps/v1", kind, name, ns, mgr)
	var containers []any
	n := 1 + rng.Intn(3)
	for k := 0; k < n; k++ {
		containers = append(containers, map[string]any{
			"name":  fmt.Sprintf("c%d", k),
			"image": fmt.Sprintf("registry.example/app%d:%d", k, 1+rng.Intn(3)),
		})
	}
	for _, c := range containers {
		if p := seedPorts(ports); p != nil {
			c.(map[string]any)["ports"] = p
		}
	}
	u.Object["spec"] = map[string]any{
		"replicas": int64(1 + rng.Intn(3)),
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec":     map[string]any{"containers": containers},
		},
	}
	return u
}

// mutate makes one random edit: a value, a new or removed map key, a label,
// replicas, an image, or a list edit (a container added, removed or
// reordered). full says the object is a whole read object (so list edits
// may remove items others own). A third of a Deployment's edits also
// edit a container's ports, drawn from ports.
func mutate(rng, ports *rand.Rand, kind string, u *unstructured.Unstructured, full bool) {
	mutateFields(rng, kind, u)
	if kind == "Deployment" && ports.Intn(3) == 0 {
		mutatePorts(ports, u)
	}
}

// setRandomLabel sets one of labels l0-l2 to one of x0-x2.
func setRandomLabel(rng *rand.Rand, u *unstructured.Unstructured) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[fmt.Sprintf("l%d", rng.Intn(3))] = fmt.Sprintf("x%d", rng.Intn(3))
	u.SetLabels(labels)
}

// mutateFields makes mutate's edit of the fields other than ports.
func mutateFields(rng *rand.Rand, kind string, u *unstructured.Unstructured) {
	switch rng.Intn(3) {
	case 0:
		setRandomLabel(rng, u)
		return
	}
	if kind == "ConfigMap" {
		data, _, _ := unstructured.NestedMap(u.Object, "data")
		if data == nil {
			data = map[string]any{}
		}
		k := fmt.Sprintf("k%d", rng.Intn(6))
		if _, ok := data[k]; ok && rng.Intn(3) == 0 {
			delete(data, k)
		} else {
			data[k] = fmt.Sprintf("v%d", rng.Intn(3))
		}
		u.Object["data"] = data
		return
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	switch rng.Intn(5) {
	case 0:
		_ = unstructured.SetNestedField(u.Object, int64(1+rng.Intn(5)), "spec", "replicas")
		return
	case 1, 2:
		if len(containers) > 0 {
			k := rng.Intn(len(containers))
			containers[k].(map[string]any)["image"] = fmt.Sprintf("registry.example/app%d:%d", k, 1+rng.Intn(4))
		}
	case 3:
		names := map[string]bool{}
		for _, c := range containers {
			names[c.(map[string]any)["name"].(string)] = true
		}
		for k := 0; k < 5; k++ {
			n := fmt.Sprintf("c%d", k)
			if !names[n] {
				containers = append(containers, map[string]any{"name": n, "image": fmt.Sprintf("registry.example/side%d:1", k)})
				break
			}
		}
	case 4:
		if len(containers) > 1 {
			k := rng.Intn(len(containers))
			if rng.Intn(2) == 0 {
				containers = append(containers[:k], containers[k+1:]...)
			} else {
				containers[0], containers[k] = containers[k], containers[0]
			}
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
}

// offlineEngine is the offline engine as predict --offline runs it: typed
// by tc, with the API server's defaulting and validation.
func offlineEngine(tc managedfields.TypeConverter) *predict.Offline {
	o := predict.NewOffline(tc)
	o.Rules = serverrules.Rules{}
	return o
}
