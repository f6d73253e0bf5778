package inspect

import (
	"math"
	"sort"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Summary is what a watch saw, printed when it ends.
type Summary struct {
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Duration Duration  `json:"duration"`
	// Writes counts creations and modifications seen, Deletes deletions.
	Writes  int `json:"writes"`
	Deletes int `json:"deletes"`
	// Objects are the written objects, most written first.
	Objects []ObjectSummary `json:"objects"`
	// Managers are the writers, most writes first.
	Managers []ManagerSummary `json:"managers"`
	// HotFields are the most written fields.
	HotFields []FieldSummary `json:"hotFields"`
	Gaps      []Gap          `json:"gaps"`
	Fights    []Fight        `json:"fights"`
}

// ObjectSummary counts the writes of one object by churn class.
type ObjectSummary struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	Resource  string `json:"resource"`
	Writes    int    `json:"writes"`
	// Spec, Status, Metadata and Other split Writes by Churn; creations are
	// in Writes only.
	Spec     int      `json:"spec"`
	Status   int      `json:"status"`
	Metadata int      `json:"metadata"`
	Other    int      `json:"other"`
	Managers []string `json:"managers,omitempty"`
	Deleted  bool     `json:"deleted,omitempty"`
	// Hot is true when the object was written faster than the hot rate at
	// some point; PeakRate is its highest rate in writes per second.
	Hot      bool    `json:"hot,omitempty"`
	PeakRate float64 `json:"peakRate,omitempty"`
}

// ManagerSummary counts one manager's writes.
type ManagerSummary struct {
	Manager string `json:"manager"`
	Writes  int    `json:"writes"`
	// Fields is how many distinct fields it changed, Objects how many objects.
	Fields  int `json:"fields"`
	Objects int `json:"objects"`
}

// FieldSummary counts the writes of one field of one object.
type FieldSummary struct {
	Object    string   `json:"object"`
	Namespace string   `json:"namespace,omitempty"`
	Field     string   `json:"field"`
	Writes    int      `json:"writes"`
	Managers  []string `json:"managers"`
}

type stats struct {
	writes, deletes int
	objects         map[objKey]*ObjectSummary
	managers        map[string]*managerStats
	fields          map[fieldKey]*fieldStats
	gaps            []Gap
	fights          []*Fight
}

type managerStats struct {
	writes  int
	fields  map[fieldKey]struct{}
	objects map[objKey]struct{}
	mgrSet  map[string]bool
}

type fieldKey struct {
	obj  objKey
	path string
}

type fieldStats struct {
	object, namespace, field string
	writes                   int
	// managers are sorted; a slice, since a field has a manager or two and
	// a map of one costs about 200 bytes per field.
	managers []string
}

func newStats() stats {
	return stats{objects: map[objKey]*ObjectSummary{}, managers: map[string]*managerStats{}, fields: map[fieldKey]*fieldStats{}}
}

func (s *stats) object(k objKey, ref string) *ObjectSummary {
	o := s.objects[k]
	if o == nil {
		o = &ObjectSummary{Object: ref, Namespace: k.namespace, Resource: k.resource}
		s.objects[k] = o
	}
	return o
}

// write counts a creation (paths nil) or a modification.
func (s *stats) write(k objKey, ref string, e *Event, paths []fieldpath.Path, _ time.Time) {
	s.writes++
	o := s.object(k, ref)
	o.Writes++
	o.Deleted = false
	switch e.Churn {
	case ChurnSpec:
		o.Spec++
	case ChurnStatus:
		o.Status++
	case ChurnMetadata:
		o.Metadata++
	case ChurnOther:
		o.Other++
	}
	manager := ""
	if e.Writer != nil && e.Writer.Known() {
		manager = e.Writer.Manager
		if e.Writer.Subresource != "" {
			manager += " (" + e.Writer.Subresource + ")"
		}
		m := s.managers[manager]
		if m == nil {
			m = &managerStats{fields: map[fieldKey]struct{}{}, objects: map[objKey]struct{}{}}
			s.managers[manager] = m
		}
		m.writes++
		m.objects[k] = struct{}{}
		if !contains(o.Managers, manager) {
			o.Managers = append(o.Managers, manager)
			sort.Strings(o.Managers)
		}
	}
	for _, p := range paths {
		fk := fieldKey{obj: k, path: p.String()}
		f := s.fields[fk]
		if f == nil {
			f = &fieldStats{object: ref, namespace: k.namespace, field: fk.path}
			s.fields[fk] = f
		}
		f.writes++
		if manager != "" {
			if !contains(f.managers, manager) {
				f.managers = append(f.managers, manager)
				sort.Strings(f.managers)
			}
			s.managers[manager].fields[fk] = struct{}{}
		}
	}
}

func (s *stats) deleted(k objKey, ref string) {
	s.deletes++
	s.object(k, ref).Deleted = true
}

func (s *stats) hot(k objKey, rate float64) {
	o := s.objects[k]
	if o == nil {
		return
	}
	o.Hot = true
	if r := math.Round(rate*100) / 100; r > o.PeakRate {
		o.PeakRate = r
	}
}

func (s *stats) fight(f Fight) *Fight {
	p := &f
	s.fights = append(s.fights, p)
	return p
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Summary returns what the tracker saw until ended (the end of the watch;
// in a replay, the time of the last event).
func (t *Tracker) Summary(ended time.Time) Summary {
	if ended.IsZero() {
		ended = t.last
	}
	started := t.started
	if started.IsZero() {
		started = ended
	}
	s := Summary{Started: started, Ended: ended, Duration: Duration(ended.Sub(started).Round(time.Millisecond)), Writes: t.stats.writes, Deletes: t.stats.deletes,
		Objects: []ObjectSummary{}, Managers: []ManagerSummary{}, HotFields: []FieldSummary{}, Gaps: []Gap{}, Fights: []Fight{}}
	for _, o := range t.stats.objects {
		s.Objects = append(s.Objects, *o)
	}
	sort.Slice(s.Objects, func(i, j int) bool {
		a, b := s.Objects[i], s.Objects[j]
		if a.Writes != b.Writes {
			return a.Writes > b.Writes
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Object < b.Object
	})
	for name, m := range t.stats.managers {
		s.Managers = append(s.Managers, ManagerSummary{Manager: name, Writes: m.writes, Fields: len(m.fields), Objects: len(m.objects)})
	}
	sort.Slice(s.Managers, func(i, j int) bool {
		if s.Managers[i].Writes != s.Managers[j].Writes {
			return s.Managers[i].Writes > s.Managers[j].Writes
		}
		return s.Managers[i].Manager < s.Managers[j].Manager
	})
	for _, f := range t.stats.fields {
		s.HotFields = append(s.HotFields, FieldSummary{Object: f.object, Namespace: f.namespace, Field: f.field, Writes: f.writes, Managers: append([]string{}, f.managers...)})
	}
	sort.Slice(s.HotFields, func(i, j int) bool {
		a, b := s.HotFields[i], s.HotFields[j]
		if a.Writes != b.Writes {
			return a.Writes > b.Writes
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Field < b.Field
	})
	if len(s.HotFields) > t.cfg.TopFields {
		s.HotFields = s.HotFields[:t.cfg.TopFields]
	}
	s.Gaps = append(s.Gaps, t.stats.gaps...)
	for _, f := range t.stats.fights {
		s.Fights = append(s.Fights, *f)
	}
	return s
}

// Fights returns how many fights were seen (for --fail-on-fight).
func (t *Tracker) Fights() int { return len(t.stats.fights) }
