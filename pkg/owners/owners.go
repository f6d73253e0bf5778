package owners

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
)

// Config says which owned fields to keep.
type Config struct {
	// Filter keeps the fields of one manager, one subtree or the shared
	// fields; the zero Filter keeps every field.
	Filter managedfields.Filter
	// Drift, when set, checks every object for fields owned by managers
	// other than the expected one (Object.Drift, Result.DriftFields).
	Drift *DriftConfig
	// Now is the time ages are measured from; entries written after it are
	// counted in Result.ClockSkew. Zero skips the check.
	Now time.Time
}

// Object is one object's ownership.
type Object struct {
	Object *unstructured.Unstructured
	// Source is where the object was read from ("deploy.yaml:3"), empty for
	// the cluster.
	Source string
	// Origin is Source as pkg/objects gave it (file, document line, List
	// item), for placing the object's fields on the file's lines.
	Origin objects.Source
	// Decoded is the whole ownership the object's managedFields hold,
	// attached to the object.
	Decoded *managedfields.Ownership
	// Ownership is Decoded narrowed by Config.Filter (Decoded itself when
	// the filter keeps everything).
	Ownership *managedfields.Ownership
	// Entries are the managedFields entries the filter keeps.
	Entries []managedfields.Entry
	// Hazards are the hazards of Decoded that concern the kept fields and
	// entries.
	Hazards []managedfields.Hazard
	// Drift is the object's drift from its expected manager, when
	// Config.Drift asks for it.
	Drift *Drift
}

// Result is what Analyze found.
type Result struct {
	// Objects are the objects in the order they were given.
	Objects []Object
	// Findings is how many hazards the objects have after filtering: what
	// --fail-on hazard fails on (Findings).
	Findings int
	// NothingMatched is true when the config filters and no object has an
	// owned field left.
	NothingMatched bool
	// DriftFields is how many fields, over every object, are owned by a
	// manager other than the expected one (with Config.Drift): what
	// --expect-manager fails on.
	DriftFields int
	// ClockSkew counts the entries whose time is after Config.Now.
	ClockSkew ClockSkew
}

// ClockSkew describes the managedFields entries written "in the future":
// the API server's clock, or this machine's, is off. Their ages would read
// 0s; the views show them as ahead instead, and the command explains why
// once.
type ClockSkew struct {
	// Entries is how many entries are ahead of now.
	Entries int
	// Max is how far the furthest one is ahead.
	Max time.Duration
}

// Analyze decodes the ownership of every object, applies cfg's filter and
// finds the hazards. An object without managedFields, or with an invalid
// entry, is an error naming the object, and its file and line when it was
// read from a file.
func Analyze(objs []objects.Object, cfg Config) (*Result, error) {
	r := &Result{Objects: make([]Object, 0, len(objs))}
	for _, obj := range objs {
		o, err := analyze(obj, cfg.Filter)
		if err != nil {
			return nil, err
		}
		if cfg.Drift != nil {
			o.Drift = drift(&o, *cfg.Drift)
			r.DriftFields += len(o.Drift.Fields)
		}
		r.Objects = append(r.Objects, o)
		r.Findings += len(o.Hazards)
		r.ClockSkew.add(o.Decoded.Entries(), cfg.Now)
	}
	r.NothingMatched = !cfg.Filter.IsZero() && !anyOwned(r.Objects)
	return r, nil
}

func (s *ClockSkew) add(entries []managedfields.Entry, now time.Time) {
	if now.IsZero() {
		return
	}
	for _, e := range entries {
		if ahead := e.Time.Sub(now); !e.Time.IsZero() && ahead > 0 {
			s.Entries++
			s.Max = max(s.Max, ahead)
		}
	}
}

func anyOwned(objs []Object) bool {
	for _, o := range objs {
		if o.Ownership.OwnedCount() > 0 {
			return true
		}
	}
	return false
}

func analyze(obj objects.Object, filter managedfields.Filter) (Object, error) {
	own, err := managedfields.Build(obj.Object)
	if err != nil {
		return Object{}, fmt.Errorf("%s: %w", where(obj), err)
	}
	filtered := own.Filtered(filter)
	var entries []managedfields.Entry
	for _, e := range own.Entries() {
		if filter.KeepsEntry(e) {
			entries = append(entries, e)
		}
	}
	src := ""
	if obj.Source.File != "" {
		src = obj.Source.String()
	}
	return Object{
		Object:    obj.Object,
		Source:    src,
		Origin:    obj.Source,
		Decoded:   own,
		Ownership: filtered,
		Entries:   entries,
		Hazards:   managedfields.FilterHazards(own.Hazards(), filter, filtered),
	}, nil
}

// where names an object in a decoding error: "deploy.yaml:3: Deployment
// default/web" for a file (the position first, as compilers do), "Deployment
// default/web" for the cluster.
func where(obj objects.Object) string {
	if obj.Source.File == "" {
		return obj.Describe()
	}
	return fmt.Sprintf("%s: %s", obj.Source, objects.Object{Object: obj.Object}.Describe())
}

// Findings are what owners --fail-on fails on: Result.Findings.
var Findings = findings.Vocabulary{
	{Name: "hazard", Noun: "hazard", Help: "an ownership hazard shown: a shared field, a generic manager, stale fields, a duplicate entry"},
}
