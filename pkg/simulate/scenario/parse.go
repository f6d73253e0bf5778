package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Error is an invalid scenario: the source file, the line (0 when
// unknown) and what is wrong.
type Error struct {
	Source string
	Line   int
	Msg    string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// The defaults of a scenario.
const (
	DefaultSeed               = 1
	DefaultDuration           = 60 * time.Second
	DefaultLatencyMin         = 1 * time.Millisecond
	DefaultLatencyMax         = 4 * time.Millisecond
	DefaultCompactionInterval = 5 * time.Minute
	DefaultLeaseDuration      = 15 * time.Second
	DefaultRenewDeadline      = 10 * time.Second
	DefaultRetryPeriod        = 2 * time.Second
	// MaxReplicas bounds the copies of one actor.
	MaxReplicas = 10000
	// MaxDuration bounds a run's virtual time.
	MaxDuration = 7 * 24 * time.Hour
)

var unknownField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^line (\d+): field (\S+) not found in type scenario\.(\w+)$`)
})
var lineMsg = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

// Parse decodes and validates a scenario. Unknown fields, duplicate keys,
// wrong types and impossible settings are *Error values naming the line.
// Defaults are filled in.
func Parse(data []byte, source string) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{Source: source, Msg: "empty scenario: want a Scenario with actors"}
	}
	if err := checkKind(root.Content[0]); err != nil {
		err.Source = source
		return nil, err
	}
	if err := checkTypes(root.Content[0], reflect.TypeFor[Scenario](), ""); err != nil {
		err.Source = source
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, yamlError(source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		line := extra.Line
		return nil, &Error{Source: source, Line: line, Msg: "more than one YAML document: a scenario file holds one Scenario"}
	}
	lines := nodeLines(root.Content[0])
	if err := s.validate(lines); err != nil {
		err.Source = source
		return nil, err
	}
	return &s, nil
}

// checkKind refuses, before anything else is checked, a document that is
// not a Scenario (a Deployment given to simulate run, say): its fields
// would otherwise be reported one by one as unknown.
func checkKind(doc *yaml.Node) *Error {
	if doc.Kind != yaml.MappingNode {
		return &Error{Line: doc.Line, Msg: "not a Scenario: want a mapping with apiVersion: " + APIVersion + " and kind: " + Kind}
	}
	var av, kind *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		switch doc.Content[i].Value {
		case "apiVersion":
			av = doc.Content[i+1]
		case "kind":
			kind = doc.Content[i+1]
		}
	}
	if kind != nil && kind.Kind == yaml.ScalarNode && kind.Value != Kind {
		what := fmt.Sprintf("kind %q", kind.Value)
		if av != nil && av.Kind == yaml.ScalarNode && av.Value != "" {
			what += fmt.Sprintf(" (apiVersion %q)", av.Value)
		}
		return &Error{Line: kind.Line, Msg: fmt.Sprintf("not a Scenario: the file holds %s; a scenario has apiVersion: %s and kind: %s (see docs/simulate.md)", what, APIVersion, Kind)}
	}
	return nil
}

func yamlError(source string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if m := unknownField().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{Source: source, Line: n, Msg: fmt.Sprintf("unknown field %q in %s", m[2], typeName(m[3]))}
		}
		if m := lineMsg().FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			return &Error{Source: source, Line: n, Msg: m[2]}
		}
		return &Error{Source: source, Msg: msg}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineMsg().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{Source: source, Line: n, Msg: m[2]}
	}
	return &Error{Source: source, Msg: msg}
}

func typeName(t string) string {
	switch t {
	case "Scenario":
		return "the scenario"
	case "Actor":
		return "an actor"
	}
	return strings.ToLower(t[:1]) + t[1:]
}

// lines maps a dotted path (actors.0.retry) to the line of its node.
type lines map[string]int

func nodeLines(n *yaml.Node) lines {
	l := lines{}
	var walk func(path string, n *yaml.Node)
	walk = func(path string, n *yaml.Node) {
		l[path] = n.Line
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				p := k
				if path != "" {
					p = path + "." + k
				}
				l[p] = n.Content[i].Line
				if n.Content[i+1].Kind == yaml.MappingNode || n.Content[i+1].Kind == yaml.SequenceNode {
					walk(p, n.Content[i+1])
					l[p] = n.Content[i].Line
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(path+"."+strconv.Itoa(i), c)
			}
		}
	}
	walk("", n)
	return l
}

// at returns the line of the deepest known prefix of path.
func (l lines) at(path string) int {
	for p := path; p != ""; {
		if n, ok := l[p]; ok {
			return n
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}

func errAt(l lines, path, format string, args ...any) *Error {
	return &Error{Line: l.at(path), Msg: fmt.Sprintf(format, args...)}
}

func (s *Scenario) validate(l lines) *Error {
	if s.APIVersion != APIVersion {
		return errAt(l, "apiVersion", "apiVersion must be %s, not %q", APIVersion, s.APIVersion)
	}
	if s.Kind != Kind {
		return errAt(l, "kind", "kind must be %s, not %q", Kind, s.Kind)
	}
	for _, check := range []func(lines) *Error{s.validateSettings, s.validateTypes, s.validateObjects, s.validateActors, s.validateInvariants} {
		if err := check(l); err != nil {
			return err
		}
	}
	return nil
}

// validateSettings fills the run's defaults and checks its settings.
func (s *Scenario) validateSettings(l lines) *Error {
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	if _, set := l["duration"]; set && s.Duration == 0 {
		// 0 used to mean the default, so `duration: 0s` silently ran 60s.
		return errAt(l, "duration", "duration must be positive: omit it for the default %s", DefaultDuration)
	}
	if s.Duration == 0 {
		s.Duration = Duration(DefaultDuration)
	}
	if s.Duration < 0 || s.Duration.D() > MaxDuration {
		return errAt(l, "duration", "duration must be positive and at most %s, not %s", MaxDuration, s.Duration.D())
	}
	if s.Latency == (Range{}) {
		s.Latency = Range{Min: Duration(DefaultLatencyMin), Max: Duration(DefaultLatencyMax)}
	}
	if s.Latency.Min < 0 || s.Latency.Max < s.Latency.Min {
		return errAt(l, "latency", "latency must have 0 <= min <= max, not min %s max %s", s.Latency.Min.D(), s.Latency.Max.D())
	}
	if s.CompactionInterval == nil {
		d := Duration(DefaultCompactionInterval)
		s.CompactionInterval = &d
	}
	if *s.CompactionInterval < 0 {
		return errAt(l, "compactionInterval", "compactionInterval must not be negative (0 never compacts)")
	}
	if s.StartRevision < 0 {
		return errAt(l, "startRevision", "startRevision must not be negative")
	}
	if s.ManagedFields == nil {
		t := true
		s.ManagedFields = &t
	}
	return nil
}

func (s *Scenario) validateTypes(l lines) *Error {
	for i := range s.Types {
		t := &s.Types[i]
		p := fmt.Sprintf("types.%d", i)
		if t.Kind == "" || !strings.Contains(t.APIVersion, "/") {
			return errAt(l, p, "types[%d]: a custom resource needs kind and a group/version apiVersion", i)
		}
		if t.Resource == "" {
			t.Resource = strings.ToLower(t.Kind) + "s"
		}
	}
	return nil
}

func (s *Scenario) validateObjects(l lines) *Error {
	for i, o := range s.Objects {
		p := fmt.Sprintf("objects.%d", i)
		av, _ := o["apiVersion"].(string)
		k, _ := o["kind"].(string)
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if av == "" || k == "" || name == "" {
			return errAt(l, p, "objects[%d]: an object needs apiVersion, kind and metadata.name", i)
		}
		if _, ok := md["resourceVersion"]; ok {
			return errAt(l, p+".metadata.resourceVersion", "objects[%d]: metadata.resourceVersion must not be set: the store assigns it", i)
		}
	}
	return nil
}

func (s *Scenario) validateActors(l lines) *Error {
	if len(s.Actors) == 0 {
		return errAt(l, "actors", "a scenario needs at least one actor")
	}
	seen := map[string]bool{}
	for i := range s.Actors {
		if err := s.Actors[i].validate(l, fmt.Sprintf("actors.%d", i), s.Duration); err != nil {
			return err
		}
		n := s.Actors[i].Name
		if seen[n] {
			return errAt(l, fmt.Sprintf("actors.%d.name", i), "actor name %q is used twice", n)
		}
		seen[n] = true
	}
	return nil
}

func (s *Scenario) validateInvariants(l lines) *Error {
	for i, inv := range s.Invariants {
		p := fmt.Sprintf("invariants.%d", i)
		if (inv.Counter == nil) == (inv.Equals == nil) {
			return errAt(l, p, "invariants[%d]: set exactly one of counter and equals", i)
		}
		target, path, field := Ref{}, "", ""
		if c := inv.Counter; c != nil {
			target, path, field = c.Target, c.Path, "counter"
		} else {
			target, path, field = inv.Equals.Target, inv.Equals.Path, "equals"
		}
		if err := target.validate(l, p+"."+field+".target"); err != nil {
			return err
		}
		if _, err := ParsePath(path); err != nil {
			return errAt(l, p+"."+field+".path", "invariants[%d].%s.path: %v", i, field, err)
		}
	}
	return nil
}

func (r Ref) validate(l lines, p string) *Error {
	if r.APIVersion == "" || r.Kind == "" || r.Name == "" {
		return errAt(l, p, "%s needs apiVersion, kind and name", dotted(p))
	}
	return nil
}

func dotted(p string) string {
	parts := strings.Split(p, ".")
	var b strings.Builder
	for i, s := range parts {
		if _, err := strconv.Atoi(s); err == nil {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`) })

func (a *Actor) validate(l lines, p string, total Duration) *Error {
	where := fmt.Sprintf("%s (%q)", dotted(p), a.Name)
	if !nameRE().MatchString(a.Name) || len(a.Name) > 50 {
		return errAt(l, p+".name", "%s: name must be a lower-case DNS label of at most 50 characters", dotted(p))
	}
	if a.Replicas == 0 {
		a.Replicas = 1
	}
	if a.Replicas < 0 || a.Replicas > MaxReplicas {
		return errAt(l, p+".replicas", "%s: replicas must be between 1 and %d", where, MaxReplicas)
	}
	if err := a.Target.validate(l, p+".target"); err != nil {
		return err
	}
	if a.Write() == "" && a.Method != MethodLeaderElection && a.Method != MethodWatch {
		return errAt(l, p+".method", "%s: unknown method %q: use one of %s", where, a.Method, strings.Join(Methods, ", "))
	}
	if a.Start < 0 || a.Start >= total {
		return errAt(l, p+".start", "%s: start must be in [0, duration)", where)
	}
	if a.Stop != nil && (*a.Stop <= a.Start || *a.Stop > total) {
		return errAt(l, p+".stop", "%s: stop must be after start and at most the duration", where)
	}
	if a.Work < 0 {
		return errAt(l, p+".work", "%s: work must not be negative", where)
	}
	if a.Writes < 0 {
		return errAt(l, p+".writes", "%s: writes must not be negative", where)
	}
	switch a.Method {
	case MethodLeaderElection:
		return a.validateLease(l, p, where)
	case MethodWatch:
		return a.validateWatch(l, p, where)
	}
	return a.validateWriter(l, p, where)
}

func (a *Actor) validateWatch(l lines, p, where string) *Error {
	if a.Watch == nil {
		a.Watch = &Watch{}
	}
	if a.Watch.DisconnectAt != nil && (*a.Watch.DisconnectAt < 0 || a.Watch.Downtime <= 0) {
		return errAt(l, p+".watch", "%s: a disconnect needs disconnectAt >= 0 and a positive downtime", where)
	}
	if a.Lease != nil {
		return errAt(l, p+".lease", "%s: lease is only for method leader-election", where)
	}
	return nil
}

// validateWriter checks the pace, the change and the retry policy of an
// actor that writes.
func (a *Actor) validateWriter(l lines, p, where string) *Error {
	if a.Lease != nil || a.Watch != nil {
		return errAt(l, p+".method", "%s: lease and watch settings need method leader-election or watch", where)
	}
	if a.Rate < 0 {
		return errAt(l, p+".rate", "%s: rate must be positive", where)
	}
	if (a.Rate > 0) == (a.ThinkTime != nil) {
		return errAt(l, p, "%s: set exactly one of rate (writes per second) and thinkTime", where)
	}
	if a.ThinkTime != nil && *a.ThinkTime < 0 {
		return errAt(l, p+".thinkTime", "%s: thinkTime must not be negative", where)
	}
	if a.ThinkTime != nil && *a.ThinkTime == 0 && a.Work == 0 && a.Writes == 0 {
		return errAt(l, p+".thinkTime", "%s: thinkTime 0 with work 0 never lets virtual time advance: set writes, work or a thinkTime", where)
	}
	if err := a.validateChange(l, p, where); err != nil {
		return err
	}
	return a.validateRetry(l, p, where)
}

func (a *Actor) validateChange(l lines, p, where string) *Error {
	c := a.Change
	var path fieldpath.Path
	n := 0
	for _, s := range []string{c.Increment, c.Set, c.Insert} {
		if s == "" {
			continue
		}
		n++
		var err error
		if path, err = ParsePath(s); err != nil {
			return errAt(l, p+".change", "%s: change path %q: %v", where, s, err)
		}
		if HasSelector(path) && (a.Write() == writepath.JSONPatch || a.Write() == writepath.JSONPatchTest) {
			return errAt(l, p+".change", "%s: a JSON patch addresses list items by index, not by [key=value]", where)
		}
	}
	if n != 1 {
		return errAt(l, p+".change", "%s: change needs exactly one of increment, set and insert", where)
	}
	if c.Set != "" && c.Value == nil && len(c.Values) == 0 {
		return errAt(l, p+".change", "%s: change.set needs value or values", where)
	}
	if c.Value != nil && len(c.Values) > 0 {
		return errAt(l, p+".change", "%s: set value or values, not both", where)
	}
	if c.Insert != "" && c.Value == nil {
		return errAt(l, p+".change", "%s: change.insert needs a value", where)
	}
	if c.Test != nil {
		if a.Write() != writepath.JSONPatchTest {
			return errAt(l, p+".change.test", "%s: change.test is only for method json-patch-test", where)
		}
		tp, err := ParsePath(c.Test.Path)
		if err != nil || HasSelector(tp) {
			return errAt(l, p+".change.test.path", "%s: change.test.path must be a dotted path with [i] indexes", where)
		}
	}
	if c.At < 0 {
		return errAt(l, p+".change.at", "%s: change.at must not be negative", where)
	}
	if a.Write().IsApply() && c.Set == "" {
		return errAt(l, p+".change", "%s: apply actors declare the field they own with change.set", where)
	}
	if a.Write() == writepath.UpdateStatus && (path[0].FieldName == nil || *path[0].FieldName != "status") {
		return errAt(l, p+".change", "%s: update-status can only change .status fields", where)
	}
	return nil
}

func (a *Actor) validateRetry(l lines, p, where string) *Error {
	r := &a.Retry
	if r.Policy == "" {
		r.Policy = RetryNone
	}
	switch r.Policy {
	case RetryNone, RetryDefaultRetry, RetryDefaultBackoff:
		if r.Backoff != nil {
			return errAt(l, p+".retry.backoff", "%s: retry.backoff is only for policy custom", where)
		}
	case RetryCustom:
		b := r.Backoff
		if b == nil {
			return errAt(l, p+".retry", "%s: retry policy custom needs a backoff", where)
		}
		if b.Steps < 1 || b.Steps > 1000 {
			return errAt(l, p+".retry.backoff.steps", "%s: backoff.steps must be between 1 and 1000", where)
		}
		if b.Duration < 0 || b.Factor < 0 || b.Jitter < 0 || b.Cap < 0 {
			return errAt(l, p+".retry.backoff", "%s: backoff duration, factor, jitter and cap must not be negative", where)
		}
	default:
		return errAt(l, p+".retry.policy", "%s: unknown retry policy %q: use none, DefaultRetry, DefaultBackoff or custom", where, r.Policy)
	}
	return nil
}

func (a *Actor) validateLease(l lines, p, where string) *Error {
	if a.Lease == nil {
		a.Lease = &Lease{}
	}
	le := a.Lease
	if le.LeaseDuration == 0 {
		le.LeaseDuration = Duration(DefaultLeaseDuration)
	}
	if le.RenewDeadline == 0 {
		le.RenewDeadline = Duration(DefaultRenewDeadline)
	}
	if le.RetryPeriod == 0 {
		le.RetryPeriod = Duration(DefaultRetryPeriod)
	}
	// The checks of client-go's leaderelection.NewLeaderElector.
	if le.LeaseDuration <= le.RenewDeadline {
		return errAt(l, p+".lease", "%s: leaseDuration must be greater than renewDeadline", where)
	}
	if float64(le.RenewDeadline) <= 1.2*float64(le.RetryPeriod) {
		return errAt(l, p+".lease", "%s: renewDeadline must be greater than retryPeriod*1.2", where)
	}
	if le.RetryPeriod < Duration(time.Millisecond) {
		return errAt(l, p+".lease.retryPeriod", "%s: retryPeriod must be at least 1ms", where)
	}
	if a.Target.Kind != "Lease" {
		return errAt(l, p+".target", "%s: leader election needs a coordination.k8s.io/v1 Lease target", where)
	}
	return nil
}

// serverFields are the metadata fields the API server maintains.
var serverFields = []string{"resourceVersion", "managedFields", "generation"}

// ParsePath parses a change or invariant path with managedfields.ParsePath
// (data.count, spec.containers[0].image, spec.containers[name=app].image)
// and refuses the fields the server maintains.
func ParsePath(s string) (fieldpath.Path, error) {
	p, err := managedfields.ParsePath(s)
	if err != nil {
		return nil, fmt.Errorf("want a dotted path such as data.count or spec.containers[0].image: %w", err)
	}
	if p[0].FieldName == nil {
		return nil, fmt.Errorf("%s: a path starts with a field name", s)
	}
	if len(p) >= 2 && p[0].FieldName != nil && *p[0].FieldName == "metadata" && p[1].FieldName != nil && slices.Contains(serverFields, *p[1].FieldName) {
		return nil, fmt.Errorf("%s is maintained by the server", s)
	}
	return p, nil
}

// HasSelector reports whether p selects a list item by key or value, which
// a JSON patch cannot address.
func HasSelector(p fieldpath.Path) bool {
	return slices.ContainsFunc(p, func(pe fieldpath.PathElement) bool { return pe.Key != nil || pe.Value != nil })
}
