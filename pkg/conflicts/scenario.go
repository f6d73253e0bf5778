package conflicts

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// ErrNoContention is returned by BuildScenario when the report has no
// write attempt on an object to reproduce.
var ErrNoContention = errors.New("nothing to reproduce")

// PatchHint counts how a writer patched the timeline's object: the audit
// event says only "patch", its request URI says whether it was an apply
// (the force parameter exists only for server-side apply).
type PatchHint struct {
	Apply, ApplyForce, Other int
}

// PatchHints reads the sources again for the patches of obj inside cfg's
// window, by writer (audit.Writer.String()). It decodes every event once
// more, one source at a time. Errors are the decoder's or ctx's.
func PatchHints(ctx context.Context, sources []audit.Source, obj ObjectKey, cfg Config) (map[string]PatchHint, error) {
	hints := map[string]PatchHint{}
	seen := audit.NewDedup()
	for _, src := range sources {
		_, err := audit.Decode(ctx, src, audit.Options{Strict: cfg.Strict}, func(e *audit.Event) error {
			r := &e.ObjectRef
			if e.Verb != "patch" || r.Name != obj.Name || r.Resource != obj.Resource || r.APIGroup != obj.Group || r.Namespace != obj.Namespace {
				return nil
			}
			if !seen.First(e) || audit.DryRun(e) {
				return nil
			}
			if !cfg.Window.Holds(e.RequestReceived) {
				return nil
			}
			w := audit.WriterOf(e).String()
			h := hints[w]
			switch force(e.RequestURI) {
			case "true":
				h.ApplyForce++
			case "false":
				h.Apply++
			default:
				h.Other++
			}
			hints[w] = h
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return hints, nil
}

// force returns the request's ?force= value, "" when absent.
func force(uri string) string {
	_, q, ok := strings.Cut(uri, "?")
	if !ok || !strings.Contains(q, "force=") {
		return ""
	}
	v, err := url.ParseQuery(q)
	if err != nil {
		return ""
	}
	return v.Get("force")
}

// ScenarioInput is what BuildScenario reproduces.
type ScenarioInput struct {
	Report *Report
	// Hints are PatchHints' answer; nil tells apply from other patches by
	// the 409s' causes only.
	Hints map[string]PatchHint
	// Origin names the logs, and File the scenario file, for the header
	// comment.
	Origin []string
	File   string
}

// writerPlan is what BuildScenario learnt of one writer's writes of one
// method on the object: a writer that sent several methods has one plan
// (one actor) for each.
type writerPlan struct {
	writer  string
	manager string
	method  writepath.Method
	// suffix tells apart the plans of one writer in actor names.
	suffix     string
	first      time.Time
	attempts   int
	conflicts  int
	successes  int
	chains     map[int]bool
	maxSteps   int
	rereads    bool
	staleCause int
	// owners are the managers and fields its apply conflicts named.
	owners []FieldOwner
	// change is what each of its writes changes, why says why (for the
	// actor's comment).
	change scenario.Change
	why    string
}

// BuildScenario writes a kubectl rv simulate scenario that reproduces the
// contention on the report's timeline object (Config.Object, or the
// hottest with Config.HottestTimeline): one actor per writer and write
// method it sent (force as sent), with its rate (retry chains per second
// over the window the log covers), its retry policy (DefaultRetry when it
// retried within DefaultRetry's five steps), and a work time (between read
// and write) chosen so that the simulated 409 rate is the one observed.
//
// Model, for a writer whose fraction p of attempts got a 409 while the
// other writers succeeded λ times a second: in a Poisson model a write
// fails when another success lands in its read-to-write window w, with
// probability 1 - exp(-λ w); so w = -ln(1 - p) / λ (p capped at 0.95).
// An apply's 409 depends on who owns the fields it sets, not on timing:
// appliers set the fields their conflicts name (assignChanges) and start
// at their first write's time, then write at their rate's period.
//
// The result parses with scenario.Parse; it starts with a comment saying
// where it came from and what each writer changes. Creates and deletes
// are left out (simulate's actors update and patch).
func BuildScenario(in ScenarioInput) ([]byte, *scenario.Scenario, error) {
	rep := in.Report
	if rep == nil || rep.TimelineObject == nil || len(rep.Timeline) == 0 {
		return nil, nil, fmt.Errorf("%w: no write attempt on the object in the log", ErrNoContention)
	}
	obj := *rep.TimelineObject
	if !utf8.ValidString(obj.Name) || !utf8.ValidString(obj.Namespace) || !utf8.ValidString(obj.Resource) || !utf8.ValidString(obj.Group) {
		return nil, nil, fmt.Errorf("%w: the object %q is not named in UTF-8, which no API server accepts", ErrNoContention, obj.String())
	}
	plans, first, last := planWriters(rep, in.Hints)
	if len(plans) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has only creates and deletes in the log; simulate reproduces updates and patches", ErrNoContention, obj)
	}
	typ, custom := objectType(obj)
	window := last.Sub(first)
	sc := &scenario.Scenario{
		APIVersion: scenario.APIVersion, Kind: scenario.Kind, Name: dnsLabel(obj.Resource + "-" + obj.Name),
		Description: "The contention on " + obj.String() + " as the audit log saw it, reproduced by kubectl rv conflicts --scenario.",
		Seed:        1,
		Duration:    scenario.Duration(max(window.Round(time.Second)+time.Second, 30*time.Second)),
	}
	if custom != nil {
		sc.Types = []scenario.Type{*custom}
	}
	target := scenario.Ref{APIVersion: typ.GVK.GroupVersion().String(), Kind: typ.GVK.Kind, Namespace: obj.Namespace, Name: obj.Name}
	changes := assignChanges(plans, typ)
	sc.Objects = []map[string]any{initialObject(target, changes.seeds)}
	seconds := max(window.Seconds(), 1)
	successes := 0
	for _, p := range plans {
		successes += p.successes
	}
	names := map[string]bool{}
	var comments []string
	for _, p := range plans {
		a, comment := p.actor(target, p.first.Sub(first), seconds, float64(successes-p.successes)/seconds, names)
		sc.Actors = append(sc.Actors, a)
		comments = append(comments, comment)
	}
	b, err := render(sc, comments, header(in, obj, first, window, plans, changes))
	if err != nil {
		return nil, nil, err
	}
	parsed, err := scenario.Parse(b, "scenario")
	if err != nil {
		// A broken invariant of this function, not of the input.
		return nil, nil, fmt.Errorf("the scenario written for %s does not parse: %w", obj, err)
	}
	return b, parsed, nil
}

// planWriters groups the timeline by writer and method, in order of first
// attempt, and returns the first and last attempt's times.
func planWriters(rep *Report, hints map[string]PatchHint) ([]*writerPlan, time.Time, time.Time) {
	managers := map[string]string{}
	for _, w := range rep.Writers {
		managers[w.Writer.String()] = w.Writer.FieldManager
	}
	appliers := applierWriters(rep, hints)
	type key struct {
		writer string
		method writepath.Method
	}
	byKey := map[key]*writerPlan{}
	perWriter := map[string]int{}
	var plans []*writerPlan
	var first, last time.Time
	for _, a := range rep.Timeline {
		m := attemptMethod(a, appliers[a.Writer])
		if m == "" {
			continue
		}
		if first.IsZero() || a.Received.Before(first) {
			first = a.Received
		}
		if a.Received.After(last) {
			last = a.Received
		}
		p := byKey[key{a.Writer, m}]
		if p == nil {
			p = &writerPlan{writer: a.Writer, manager: managers[a.Writer], method: m, chains: map[int]bool{}, first: a.Received}
			if perWriter[a.Writer]++; perWriter[a.Writer] > 1 {
				p.suffix = scenarioMethod(m)
			}
			byKey[key{a.Writer, m}] = p
			plans = append(plans, p)
		}
		p.add(a)
	}
	return plans, first, last
}

// applierWriters are the writers whose patches the log shows to be
// server-side applies: a force parameter in a request URI (only apply
// takes one), an apply conflict, a patch that created the object (only
// apply does), or a manager another apply conflict named as an Apply
// entry. Other patches without a force parameter look like merge patches
// in a Metadata-level log.
func applierWriters(rep *Report, hints map[string]PatchHint) map[string]bool {
	out := map[string]bool{}
	for w, h := range hints {
		if h.Apply+h.ApplyForce > 0 {
			out[w] = true
		}
	}
	applied := map[string]bool{}
	for _, a := range rep.Timeline {
		if a.Verb == "patch" && (a.Force || a.Cause == ApplyConflict || a.Code == 201) {
			out[a.Writer] = true
		}
		for _, o := range a.FieldOwners {
			applied[o.Manager] = applied[o.Manager] || o.Applied
		}
	}
	for _, w := range rep.Writers {
		if applied[w.Writer.FieldManager] {
			out[w.Writer.String()] = true
		}
	}
	return out
}

func (p *writerPlan) add(a Attempt) {
	p.attempts++
	switch {
	case a.Code == 409:
		p.conflicts++
		if a.Cause == StaleOwnCache {
			p.staleCause++
		}
	case a.Code/100 == 2:
		p.successes++
	}
	if a.Received.Before(p.first) {
		p.first = a.Received
	}
	p.chains[a.Chain] = true
	p.maxSteps = max(p.maxSteps, a.Step)
	p.rereads = p.rereads || a.Reread
	p.owners = append(p.owners, a.FieldOwners...)
}

// attemptMethod is the write method of one attempt, force as its request
// sent it; "" for what simulate does not reproduce (create, delete).
// applier says that the writer's patches are applies (applierWriters).
func attemptMethod(a Attempt, applier bool) writepath.Method {
	switch {
	case a.Verb == "update" && a.Subresource == "status":
		return writepath.UpdateStatus
	case a.Verb == "update" && a.Precondition == "":
		return writepath.UpdateNoRV
	case a.Verb == "update":
		return writepath.Update
	case a.Verb != "patch":
		return ""
	case a.Force:
		return writepath.ApplyForce
	case applier || a.Cause == ApplyConflict:
		return writepath.Apply
	case a.Code == 409:
		// A non-apply patch gets a 409 only with a resourceVersion in it.
		return writepath.MergePatchRV
	}
	return writepath.MergePatch
}

// actor turns the plan into a scenario actor and its comment; offset is
// its first write's time from the log's first, others the other writers'
// successes per second.
func (p *writerPlan) actor(target scenario.Ref, offset time.Duration, seconds, others float64, names map[string]bool) (scenario.Actor, string) {
	m := p.method
	a := scenario.Actor{Name: uniqueName(p.name(), names), Target: target, Method: scenarioMethod(m), Change: p.change}
	if validManager(p.manager) {
		a.FieldManager = p.manager
	}
	chains := len(p.chains)
	rate := roundTo(float64(max(chains, 1))/seconds, 3)
	if m.IsApply() {
		// Who applied first decides who owns a field: keep the log's order.
		a.Start = scenario.Duration(offset.Round(time.Millisecond))
		think := scenario.Duration(time.Duration(float64(time.Second) / rate).Round(time.Millisecond))
		a.ThinkTime = &think
	} else {
		a.Rate = rate
	}
	failed := float64(p.conflicts) / float64(p.attempts)
	if failed > 0 && others > 0 && !m.IsApply() {
		w := -math.Log(1-min(failed, 0.95)) / others
		a.Work = scenario.Duration(min(time.Duration(w*float64(time.Second)), 10*time.Second).Round(time.Millisecond))
	}
	a.Retry = retryOf(p.maxSteps)
	comment := fmt.Sprintf("writer %s: %s in %s (the longest took %d), %s, %s, method %s\n%s",
		quoteComment(p.writer), text.Plural(p.attempts, "write attempt"), text.Plural(chains, "operation"), p.maxSteps,
		text.Plural(p.conflicts, "409"), text.Plurals(p.successes, "success", "successes"), m, p.why)
	if p.maxSteps > 1 && !p.rereads && (m == writepath.Update || m == writepath.UpdateStatus) {
		comment += "\nit retried without re-reading (a stale resourceVersion); simulate's writers always read before they write"
	}
	if p.staleCause > 0 {
		comment += fmt.Sprintf("\n%d of its 409s were lost to its own earlier write (stale own cache), which simulate does not reproduce", p.staleCause)
	}
	return a, comment
}

// retryOf is the retry policy of a writer whose longest chain took steps
// attempts.
func retryOf(steps int) scenario.Retry {
	switch {
	case steps <= 1:
		return scenario.Retry{Policy: scenario.RetryNone}
	case steps <= 5:
		return scenario.Retry{Policy: scenario.RetryDefaultRetry}
	}
	return scenario.Retry{Policy: scenario.RetryCustom, Backoff: &scenario.Backoff{Steps: steps, Duration: scenario.Duration(10 * time.Millisecond), Factor: 1, Jitter: 0.1}}
}

// scenarioMethod spells m as scenario files do.
func scenarioMethod(m writepath.Method) string {
	if m == writepath.UpdateNoRV {
		return writepath.UpdateUnconditional
	}
	return string(m)
}

// name is the actor's name: the field manager, else the pod, else the
// user's last segment; then, for a writer's second and later methods, the
// method.
func (p *writerPlan) name() string {
	n := "writer"
	for _, s := range []string{p.manager, podOf(p.writer), p.writer[strings.LastIndexByte(p.writer, ':')+1:]} {
		if l := dnsLabel(s); l != "" {
			n = l
			break
		}
	}
	if p.suffix != "" {
		n = strings.TrimRight(n[:min(len(n), 50-len(p.suffix)-1)], "-") + "-" + p.suffix
	}
	return n
}

func podOf(writer string) string {
	if i := strings.LastIndexByte(writer, '@'); i >= 0 {
		return writer[i+1:]
	}
	return ""
}

var notLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) })

// dnsLabel makes s a DNS label (actor and scenario names must be), or "".
func dnsLabel(s string) string {
	s = notLabel().ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 50 {
		s = s[:50]
	}
	return strings.Trim(s, "-")
}

func uniqueName(n string, used map[string]bool) string {
	name := n
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s-%d", n, i)
	}
	used[name] = true
	return name
}

// validManager: the API server takes field managers of at most 128
// printable characters.
func validManager(m string) bool {
	if m == "" || len(m) > 128 || !utf8.ValidString(m) {
		return false
	}
	for _, r := range m {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// quoteComment makes a string from the log safe for a YAML comment: kept
// as it is when it is printable UTF-8, else quoted with control characters
// escaped, so that it stays on one line.
func quoteComment(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return fmt.Sprintf("%q", s)
}

func roundTo(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Max(math.Round(f*p)/p, 1/p)
}
