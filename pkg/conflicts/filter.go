package conflicts

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Filter chooses the write attempts that every figure counts and the
// timeline shows (kubectl rv conflicts --writer, --verb, --subresource,
// --status). It filters the report, not the log: every attempt in scope
// is still analysed, so a shown 409 keeps the winners, fields and cause
// that an attempt the filter hides gave it, and a shown writer's retry
// chains are the ones it made.
//
// What a filter counts of an attempt that matches: the attempt, its 409
// or success, its cause, whom it lost to and the fields, its request
// time. A retry chain counts when its first retry matches, a give-up when
// the 409 that ended the chain matches. A writer or object is listed when
// one of its attempts matches.
//
// Each kind of value is a list of patterns: an attempt matches a kind when
// no pattern of it excludes the attempt (a leading -) and, if the kind has
// patterns that include, one of them does; an attempt matches the filter
// when it matches every kind. A writer pattern matches the writer's user,
// field manager, pod, its name as the report prints it (user/manager@pod)
// or the user agent the attempt sent, with * for any characters; a
// subresource pattern the same way the attempt's subresource (a write to
// the object itself has none: -* keeps only those); a status is a code
// (409) or a class (4xx).
type Filter struct {
	writers, verbs, subresources, statuses patterns
}

// patterns are a kind's include and exclude patterns.
type patterns struct {
	include, exclude []string
}

// FilterFlags are the values of each kind, as given (repeatable flags).
type FilterFlags struct {
	Writers, Verbs, Subresources, Statuses []string
	// AnyVerb accepts every verb, reads as well as writes, for the views
	// that count every request (package load).
	AnyVerb bool
}

// ParseFilter checks the values and returns their filter, nil when none
// is given (every attempt matches). An error names the flag and value.
func ParseFilter(f FilterFlags) (*Filter, error) {
	if len(f.Writers)+len(f.Verbs)+len(f.Subresources)+len(f.Statuses) == 0 {
		return nil, nil
	}
	var out Filter
	var err error
	if out.writers, err = parsePatterns("--writer", f.Writers, nil); err != nil {
		return nil, err
	}
	check := checkVerb
	if f.AnyVerb {
		check = nil
	}
	if out.verbs, err = parsePatterns("--verb", f.Verbs, check); err != nil {
		return nil, err
	}
	if out.subresources, err = parsePatterns("--subresource", f.Subresources, nil); err != nil {
		return nil, err
	}
	if out.statuses, err = parsePatterns("--status", f.Statuses, checkStatus); err != nil {
		return nil, err
	}
	return &out, nil
}

func checkVerb(v string) error {
	if !slices.Contains(audit.WriteVerbs, v) {
		return fmt.Errorf("is not a write verb: use one of %s", strings.Join(audit.WriteVerbs, ", "))
	}
	return nil
}

func checkStatus(v string) error {
	if len(v) == 3 && v[0] >= '1' && v[0] <= '5' && (v[1:] == "xx" || isDigits(v[1:])) {
		return nil
	}
	return fmt.Errorf("is not an HTTP status: give a code (409) or a class (4xx)")
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}

func parsePatterns(flag string, values []string, check func(string) error) (patterns, error) {
	var p patterns
	for _, v := range values {
		body, neg := strings.CutPrefix(v, "-")
		if body == "" {
			return p, fmt.Errorf("%s %q: give a value, or -VALUE to leave it out", flag, v)
		}
		if check != nil {
			if err := check(body); err != nil {
				return p, fmt.Errorf("%s %q %w", flag, v, err)
			}
		}
		if neg {
			p.exclude = append(p.exclude, body)
		} else {
			p.include = append(p.include, body)
		}
	}
	return p, nil
}

// keeps says whether the values of an attempt (any of them matching a
// pattern matches it) pass p.
func (p patterns) keeps(match func(pattern string, values []string) bool, values ...string) bool {
	for _, x := range p.exclude {
		if match(x, values) {
			return false
		}
	}
	if len(p.include) == 0 {
		return true
	}
	for _, x := range p.include {
		if match(x, values) {
			return true
		}
	}
	return false
}

// globAny says whether one of the non-empty values matches pattern, *
// matching any characters.
func globAny(pattern string, values []string) bool {
	for _, v := range values {
		if v != "" && glob(pattern, v) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where * is any run of characters.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// statusMatch says whether the code values[0] is the code or in the
// class pattern.
func statusMatch(pattern string, values []string) bool {
	code := values[0]
	if strings.HasSuffix(pattern, "xx") {
		return len(code) == 3 && code[0] == pattern[0]
	}
	return code == pattern
}

// equalAny says whether a value is the pattern.
func equalAny(pattern string, values []string) bool {
	return slices.Contains(values, pattern)
}

// keepsWriter says whether the writer k, sending userAgent, passes the
// writer patterns.
func (f *Filter) keepsWriter(k audit.Writer, userAgent string) bool {
	if f == nil {
		return true
	}
	return f.writers.keeps(globAny, k.User, k.FieldManager, k.Pod, k.String(), userAgent)
}

// keepsRequest says whether an attempt's verb, subresource and code pass
// the other patterns.
func (f *Filter) keepsRequest(verb, sub string, code int) bool {
	if f == nil {
		return true
	}
	return f.verbs.keeps(equalAny, verb) && f.subresources.keeps(globAny, sub) &&
		f.statuses.keeps(statusMatch, strconv.Itoa(code))
}

// Keeps says whether the request e is in cfg's scope (--object, -n,
// --resource) and passes its filter; a request with no name (a list) is
// about its collection, which --object never names. --since and --until
// are the caller's: load.Config.Window.
func (cfg *Config) Keeps(e *audit.Event) bool {
	r := &e.ObjectRef
	k := ObjectKey{Group: r.APIGroup, Resource: r.Resource, Namespace: r.Namespace, Name: r.Name}
	if cfg.Namespace != "" && k.Namespace != cfg.Namespace || cfg.Object != nil && !matchObject(*cfg.Object, k) ||
		!cfg.Resources.Keeps(k.Group, k.Resource) {
		return false
	}
	f := cfg.Filter
	return f == nil || f.keepsWriter(audit.WriterOf(e), e.UserAgent) && f.keepsRequest(e.Verb, r.Subresource, e.Code)
}

// errEnough stops WriterNames' read.
var errEnough = errors.New("enough events read")

// WriterNames are the users and field managers of the first max write
// events of the sources (sorted, each once): the values --writer
// completes to, read cheaply from the start of the log. A source that
// cannot be read adds nothing.
func WriterNames(ctx context.Context, sources []audit.Source, max int) []string {
	seen := map[string]bool{}
	n := 0
	for _, src := range sources {
		_, _ = audit.Decode(ctx, src, audit.Options{}, func(e *audit.Event) error {
			if writeVerb(e.Verb) == "" || audit.DryRun(e) {
				return nil
			}
			k := audit.WriterOf(e)
			seen[strings.Clone(k.User)] = true
			if k.FieldManager != "" {
				seen[strings.Clone(k.FieldManager)] = true
			}
			if n++; n >= max {
				return errEnough
			}
			return nil
		})
		if n >= max {
			break
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
