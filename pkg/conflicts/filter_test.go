package conflicts

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		flags FilterFlags
		err   string
	}{
		{FilterFlags{}, ""},
		{FilterFlags{Writers: []string{"kube-*", "-*@pod-1"}, Verbs: []string{"update", "-patch"}, Statuses: []string{"409", "2xx", "-201"}, Subresources: []string{"-*"}}, ""},
		{FilterFlags{Verbs: []string{"get"}}, `--verb "get" is not a write verb: use one of create, update, patch, delete, deletecollection`},
		{FilterFlags{Statuses: []string{"40"}}, `--status "40" is not an HTTP status`},
		{FilterFlags{Statuses: []string{"6xx"}}, `--status "6xx" is not an HTTP status`},
		{FilterFlags{Statuses: []string{"+09"}}, `--status "+09" is not an HTTP status`},
		{FilterFlags{Writers: []string{"-"}}, `--writer "-": give a value, or -VALUE to leave it out`},
	} {
		f, err := ParseFilter(tc.flags)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%+v: %v", tc.flags, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%+v: error %v, want %q", tc.flags, err, tc.err)
		case tc.err == "" && (f == nil) != (len(tc.flags.Writers)+len(tc.flags.Verbs)+len(tc.flags.Statuses)+len(tc.flags.Subresources) == 0):
			t.Errorf("%+v: filter %v", tc.flags, f)
		}
	}
}

func TestFilterKeeps(t *testing.T) {
	w := audit.Writer{User: "system:serviceaccount:kube-system:hpa", FieldManager: "kube-controller-manager", Pod: "kcm-0"}
	ua := "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:hpa"
	for _, tc := range []struct {
		flags            FilterFlags
		verb, sub        string
		code             int
		writer, requests bool
	}{
		{FilterFlags{Writers: []string{"kube-controller-manager"}}, "update", "", 200, true, true},
		{FilterFlags{Writers: []string{"kube-controller-manager/*"}}, "update", "", 200, true, true},
		{FilterFlags{Writers: []string{"*:hpa"}}, "update", "", 200, true, true},
		{FilterFlags{Writers: []string{"kcm-0"}}, "update", "", 200, true, true},
		{FilterFlags{Writers: []string{w.String()}}, "update", "", 200, true, true},
		{FilterFlags{Writers: []string{"kube"}}, "update", "", 200, false, true},
		{FilterFlags{Writers: []string{"*", "-kcm-*"}}, "update", "", 200, false, true},
		{FilterFlags{Verbs: []string{"patch", "update"}}, "update", "", 200, true, true},
		{FilterFlags{Verbs: []string{"-update"}}, "update", "", 200, true, false},
		{FilterFlags{Subresources: []string{"status"}}, "update", "status", 409, true, true},
		{FilterFlags{Subresources: []string{"status"}}, "update", "", 409, true, false},
		{FilterFlags{Subresources: []string{"-*"}}, "update", "", 409, true, true},
		{FilterFlags{Subresources: []string{"-*"}}, "update", "scale", 409, true, false},
		{FilterFlags{Statuses: []string{"4xx", "-404"}}, "update", "", 409, true, true},
		{FilterFlags{Statuses: []string{"4xx", "-409"}}, "update", "", 409, true, false},
		{FilterFlags{Statuses: []string{"2xx"}}, "create", "", 201, true, true},
	} {
		f, err := ParseFilter(tc.flags)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.keepsWriter(w, ua); got != tc.writer {
			t.Errorf("%+v: keeps the writer %v, want %v", tc.flags, got, tc.writer)
		}
		if got := f.keepsRequest(tc.verb, tc.sub, tc.code); got != tc.requests {
			t.Errorf("%+v: keeps %s %q %d: %v, want %v", tc.flags, tc.verb, tc.sub, tc.code, got, tc.requests)
		}
	}
}

// FuzzGlob holds glob to a regular expression of the same pattern.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"a*b*b", "ab"}, {"*", ""}, {"kube-*", "kube-controller-manager"}, {"*x*", "yxy"}, {"a**", "a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return // beyond what the regular expression can say
		}
		parts := strings.Split(pattern, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re := regexp.MustCompile(`(?s)\A` + strings.Join(parts, ".*") + `\z`)
		if got, want := glob(pattern, s), re.MatchString(s); got != want {
			t.Errorf("glob(%q, %q) = %v, the regular expression says %v", pattern, s, got, want)
		}
	})
}

// FuzzParseFilter: any flag values give a filter or an error naming the
// flag, never a panic.
func FuzzParseFilter(f *testing.F) {
	f.Add("kube-*", "update", "-*", "4xx")
	f.Add("-", "get", "", "999")
	f.Fuzz(func(t *testing.T, w, v, s, c string) {
		_, err := ParseFilter(FilterFlags{Writers: []string{w}, Verbs: []string{v}, Subresources: []string{s}, Statuses: []string{c}})
		if err != nil && !strings.HasPrefix(err.Error(), "--") {
			t.Errorf("the error does not name the flag: %v", err)
		}
	})
}

// TestFilterPartitions: a filter and its opposite split every figure of
// the report without a filter between them, a writer's row under a
// writer filter is its row without one, and the filtered timeline is the
// unfiltered one's matching rows, with the same winners and causes.
func TestFilterPartitions(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "audit.log")
	writeLog(t, path, genLog(5, 12000, t0))
	analyse := func(flags FilterFlags, object *ObjectKey) *Report {
		t.Helper()
		cfg := NewConfig()
		var err error
		if cfg.Filter, err = ParseFilter(flags); err != nil {
			t.Fatal(err)
		}
		cfg.Object = object
		src, err := audit.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Analyze(context.Background(), src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	all := analyse(FilterFlags{}, nil)
	for _, pair := range [][2]FilterFlags{
		{{Statuses: []string{"409"}}, {Statuses: []string{"-409"}}},
		{{Verbs: []string{"update"}}, {Verbs: []string{"-update"}}},
		{{Writers: []string{"ctrl-0"}}, {Writers: []string{"-ctrl-0"}}},
		{{Writers: []string{"*x1"}}, {Writers: []string{"-*x1"}}},
	} {
		a, b := analyse(pair[0], nil), analyse(pair[1], nil)
		if a.Summary.Attempts == 0 || b.Summary.Attempts == 0 {
			t.Errorf("%+v: one side is empty: %+v, %+v", pair, a.Summary, b.Summary)
		}
		if a.Summary.Unshown != b.Summary.Attempts || b.Summary.Unshown != a.Summary.Attempts || all.Summary.Unshown != 0 {
			t.Errorf("%+v: attempts not shown %d and %d, shown on the other side %d and %d", pair, a.Summary.Unshown, b.Summary.Unshown, b.Summary.Attempts, a.Summary.Attempts)
		}
		if got, want := sumTally(a.Summary.Tally, b.Summary.Tally), all.Summary.Tally; got != want {
			t.Errorf("%+v: the two sides add up to %+v, without a filter %+v", pair, got, want)
		}
		for _, w := range all.Writers {
			ra, rb := writerRow(a, w.Writer), writerRow(b, w.Writer)
			if got := sumTally(ra.Tally, rb.Tally); got != w.Tally {
				t.Errorf("%+v: writer %s: %+v and %+v, without a filter %+v", pair, w.Writer, ra.Tally, rb.Tally, w.Tally)
			}
			if got := sumCounts(ra.LostTo, rb.LostTo); !cmp.Equal(got, countMap(w.LostTo)) {
				t.Errorf("%+v: writer %s lost to %v, without a filter %v", pair, w.Writer, got, w.LostTo)
			}
		}
		for _, c := range all.Causes {
			if got := causeCount(a, c.Cause) + causeCount(b, c.Cause); got != c.Count {
				t.Errorf("%+v: cause %s: %d, without a filter %d", pair, c.Cause, got, c.Count)
			}
		}
	}
	// A writer filter keeps its writers' rows whole.
	only := analyse(FilterFlags{Writers: []string{"ctrl-1"}}, nil)
	for _, w := range all.Writers {
		if w.Writer.FieldManager != "ctrl-1" {
			continue
		}
		if diff := cmp.Diff(w, writerRow(only, w.Writer)); diff != "" {
			t.Errorf("writer %s under --writer ctrl-1 (-without +with):\n%s", w.Writer, diff)
		}
	}
	obj := &ObjectKey{Resource: "configmaps", Name: "c-1"}
	full := analyse(FilterFlags{}, obj)
	shown := analyse(FilterFlags{Statuses: []string{"409"}, Verbs: []string{"update"}}, obj)
	var want []Attempt
	for _, a := range full.Timeline {
		if a.Code == 409 && a.Verb == "update" {
			want = append(want, a)
		}
	}
	if len(want) == 0 || !cmp.Equal(want, shown.Timeline) {
		t.Errorf("the filtered timeline (-matching rows of the whole +filtered):\n%s", cmp.Diff(want, shown.Timeline))
	}
}

func sumTally(a, b Tally) Tally {
	return Tally{Attempts: a.Attempts + b.Attempts, Conflicts: a.Conflicts + b.Conflicts, Successes: a.Successes + b.Successes,
		RetryChains: a.RetryChains + b.RetryChains, GiveUps: a.GiveUps + b.GiveUps}
}

func writerRow(rep *Report, k audit.Writer) WriterStats {
	i := slices.IndexFunc(rep.Writers, func(w WriterStats) bool { return w.Writer == k })
	if i < 0 {
		return WriterStats{}
	}
	return rep.Writers[i]
}

func countMap(cs []Count) map[string]int {
	m := map[string]int{}
	for _, c := range cs {
		m[c.Name] += c.Count
	}
	return m
}

func sumCounts(a, b []Count) map[string]int {
	m := countMap(a)
	for k, v := range countMap(b) {
		m[k] += v
	}
	return m
}

func causeCount(rep *Report, c Cause) int {
	for _, s := range rep.Causes {
		if s.Cause == c {
			return s.Count
		}
	}
	return 0
}

// TestWriteVerbIsAuditsList: the verbs the analysis counts (writeVerb) are
// audit.WriteVerbs, which --verb accepts and the log services' filters keep.
func TestWriteVerbIsAuditsList(t *testing.T) {
	for _, v := range audit.WriteVerbs {
		if writeVerb(v) != v {
			t.Errorf("writeVerb(%q) = %q", v, writeVerb(v))
		}
	}
	for _, v := range []string{"get", "list", "watch", "Update", "", "apply"} {
		if writeVerb(v) != "" {
			t.Errorf("writeVerb(%q) = %q, want none", v, writeVerb(v))
		}
	}
}
