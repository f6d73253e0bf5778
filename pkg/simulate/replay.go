package simulate

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/diff"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
)

// Replay is a `kubectl rv watch --record` recording indexed by object, to
// answer "what did this object look like at resourceVersion N" and "what
// changed between N and M".
type Replay struct {
	Header  inspect.RecordingHeader
	objects map[string]*History
	order   []string
}

// History is every recorded version of one object, in recording order.
type History struct {
	// Ref is resource/namespace/name (resource/name when cluster-scoped).
	Ref      string
	Resource string
	Versions []Version
}

// Version is one recorded state of an object.
type Version struct {
	ResourceVersion string                     `json:"resourceVersion"`
	Type            inspect.RecordType         `json:"type"`
	Object          *unstructured.Unstructured `json:"object,omitempty"`
}

// ErrNoSuchVersion is returned when an object has no recorded state at or
// before the asked resourceVersion.
var ErrNoSuchVersion = errors.New("no recorded state at or before that resourceVersion")

// LoadReplay reads a recording.
func LoadReplay(r io.Reader) (*Replay, error) {
	rec, err := inspect.ReadRecording(r)
	if err != nil {
		return nil, err
	}
	rp := &Replay{Header: rec.Header, objects: map[string]*History{}}
	for _, ev := range rec.Events {
		if ev.Object == nil {
			continue
		}
		res := ev.Resource
		if i := strings.LastIndexByte(res, '/'); i >= 0 {
			res = res[i+1:]
		}
		ref := res + "/" + ev.Object.GetName()
		if ns := ev.Object.GetNamespace(); ns != "" {
			ref = res + "/" + ns + "/" + ev.Object.GetName()
		}
		h, ok := rp.objects[ref]
		if !ok {
			h = &History{Ref: ref, Resource: ev.Resource}
			rp.objects[ref] = h
			rp.order = append(rp.order, ref)
		}
		rv := ev.Object.GetResourceVersion()
		if n := len(h.Versions); n > 0 && h.Versions[n-1].ResourceVersion == rv && ev.Type == inspect.RecordList {
			continue // a relist repeats the state already seen
		}
		h.Versions = append(h.Versions, Version{ResourceVersion: rv, Type: ev.Type, Object: ev.Object})
	}
	sort.Strings(rp.order)
	return rp, nil
}

// Objects returns the recorded objects, sorted by reference.
func (rp *Replay) Objects() []*History {
	out := make([]*History, 0, len(rp.order))
	for _, r := range rp.order {
		out = append(out, rp.objects[r])
	}
	return out
}

// Find resolves a reference typed by a user: resource/name, or
// resource/namespace/name, where resource may be the plural
// ("deployments"), the singular ("deployment") or the plural with its
// group ("deployments.apps"); namespace fills in a missing namespace.
func (rp *Replay) Find(ref, namespace string) (*History, error) {
	parts := strings.Split(ref, "/")
	var res, ns, name string
	switch len(parts) {
	case 2:
		res, name = parts[0], parts[1]
		ns = namespace
	case 3:
		res, ns, name = parts[0], parts[1], parts[2]
	default:
		return nil, fmt.Errorf("object %q: want RESOURCE/NAME or RESOURCE/NAMESPACE/NAME", ref)
	}
	res = strings.ToLower(res)
	if i := strings.IndexByte(res, '.'); i >= 0 {
		res = res[:i]
	}
	var matches []*History
	for _, r := range rp.order {
		h := rp.objects[r]
		p := strings.Split(h.Ref, "/")
		hres, hname := p[0], p[len(p)-1]
		hns := ""
		if len(p) == 3 {
			hns = p[1]
		}
		if hname != name || (ns != "" && hns != ns) {
			continue
		}
		if hres == res || hres == res+"s" || hres == res+"es" || strings.TrimSuffix(hres, "ies")+"y" == res {
			matches = append(matches, h)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("object %q is not in the recording (list them with kubectl rv simulate replay FILE)", ref)
	case 1:
		return matches[0], nil
	}
	return nil, fmt.Errorf("object %q is ambiguous: give the namespace (RESOURCE/NAMESPACE/NAME)", ref)
}

// At returns the object's state at resourceVersion rv: the last recorded
// version at or before rv ("" means the last one). A DELETED version means
// the object did not exist at rv.
func (h *History) At(rv string) (Version, error) {
	if rv == "" {
		return h.Versions[len(h.Versions)-1], nil
	}
	var found *Version
	for i := range h.Versions {
		v := &h.Versions[i]
		c, err := resourceversion.CompareResourceVersion(v.ResourceVersion, rv)
		if err != nil {
			return Version{}, fmt.Errorf("resourceVersion %q: %w", rv, err)
		}
		if c <= 0 {
			found = v
		}
	}
	if found == nil {
		return Version{}, fmt.Errorf("%s at %s: %w (the first is %s)", h.Ref, rv, ErrNoSuchVersion, h.Versions[0].ResourceVersion)
	}
	return *found, nil
}

// Diff returns the changed fields between the states at from and to,
// ignoring resourceVersion and managedFields timestamps' churn.
func (h *History) Diff(from, to string) (Version, Version, []diff.Change, error) {
	a, err := h.At(from)
	if err != nil {
		return Version{}, Version{}, nil, err
	}
	b, err := h.At(to)
	if err != nil {
		return Version{}, Version{}, nil, err
	}
	var am, bm map[string]any
	if a.Type != inspect.RecordDeleted {
		am = a.Object.Object
	}
	if b.Type != inspect.RecordDeleted {
		bm = b.Object.Object
	}
	d := diff.New(diff.Options{Ignore: [][]string{{"metadata", "resourceVersion"}, {"metadata", "managedFields"}}})
	return a, b, d.Objects(am, bm), nil
}
