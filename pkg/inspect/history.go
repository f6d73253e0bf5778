package inspect

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/diff"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Timeline is a recording indexed by object, to answer "what did this
// object look like at resourceVersion N" and "what changed between N and M"
// (kubectl rv watch --replay --list and --object).
type Timeline struct {
	Header  RecordingHeader
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
	Type            follow.EventType           `json:"type"`
	Object          *unstructured.Unstructured `json:"object,omitempty"`
}

// ErrNoSuchVersion is returned when an object has no recorded state at or
// before the asked resourceVersion.
var ErrNoSuchVersion = errors.New("no recorded state at or before that resourceVersion")

// NewTimeline indexes a recording by object. A relist that repeats the
// state already recorded adds no version.
func NewTimeline(rec *Recording) *Timeline {
	tl := &Timeline{Header: rec.Header, objects: map[string]*History{}}
	for _, ev := range rec.Events {
		if ev.Object == nil {
			continue
		}
		ref := historyRef(ev.Resource, ev.Object)
		h, ok := tl.objects[ref]
		if !ok {
			h = &History{Ref: ref, Resource: ev.Resource}
			tl.objects[ref] = h
			tl.order = append(tl.order, ref)
		}
		rv := ev.Object.GetResourceVersion()
		if n := len(h.Versions); n > 0 && h.Versions[n-1].ResourceVersion == rv && ev.Type == follow.List {
			continue
		}
		h.Versions = append(h.Versions, Version{ResourceVersion: rv, Type: ev.Type, Object: ev.Object})
	}
	sort.Strings(tl.order)
	return tl
}

// historyRef is resource/namespace/name, or resource/name when
// cluster-scoped, for an object of group/version/resource.
func historyRef(resource string, u *unstructured.Unstructured) string {
	if i := strings.LastIndexByte(resource, '/'); i >= 0 {
		resource = resource[i+1:]
	}
	if ns := u.GetNamespace(); ns != "" {
		return resource + "/" + ns + "/" + u.GetName()
	}
	return resource + "/" + u.GetName()
}

// Objects returns the recorded objects, sorted by reference.
func (tl *Timeline) Objects() []*History {
	out := make([]*History, 0, len(tl.order))
	for _, r := range tl.order {
		out = append(out, tl.objects[r])
	}
	return out
}

// Find resolves a reference typed by a user: TYPE/NAME, or
// TYPE/NAMESPACE/NAME, with TYPE as kubectl reads it (a short name, the
// singular, the plural or the kind, with or without .group:
// apitypes.ParseOfflineType); namespace fills in a missing namespace.
func (tl *Timeline) Find(ref, namespace string) (*History, error) {
	on, err := apitypes.ParseObjectName(ref)
	if err != nil {
		return nil, fmt.Errorf("object %w", err)
	}
	if on.Namespace == "" {
		on.Namespace = namespace
	}
	typ, ns, name := apitypes.ParseOfflineType(on.Type), on.Namespace, on.Name
	var matches []*History
	for _, r := range tl.order {
		h := tl.objects[r]
		if h.matches(typ, ns, name) {
			matches = append(matches, h)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("object %q is not in the recording (list them with kubectl rv watch --replay FILE --list)", ref)
	case 1:
		return matches[0], nil
	}
	return nil, fmt.Errorf("object %q is ambiguous: give the namespace (RESOURCE/NAMESPACE/NAME)", ref)
}

// matches reports whether the history is of the object name in namespace
// ns ("" matches any), of type typ.
func (h *History) matches(typ apitypes.OfflineType, ns, name string) bool {
	p := strings.Split(h.Ref, "/")
	hname := p[len(p)-1]
	hns := ""
	if len(p) == 3 {
		hns = p[1]
	}
	if hname != name || (ns != "" && hns != ns) {
		return false
	}
	// h.Resource is group/version/resource, or version/resource in the
	// core group.
	gvr := strings.Split(h.Resource, "/")
	group := ""
	if len(gvr) == 3 {
		group = gvr[0]
	}
	return typ.Matches(group, gvr[len(gvr)-1])
}

// At returns the object's state at resourceVersion rv: the last recorded
// version at or before rv ("" means the last one). A DELETED version means
// the object did not exist at rv.
func (h *History) At(rv string) (VersionAt, error) {
	v, err := h.version(rv)
	return VersionAt{Ref: h.Ref, Version: v}, err
}

func (h *History) version(rv string) (Version, error) {
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
// ignoring resourceVersion and managedFields.
func (h *History) Diff(from, to string) (VersionDiff, error) {
	a, err := h.version(from)
	if err != nil {
		return VersionDiff{}, err
	}
	b, err := h.version(to)
	if err != nil {
		return VersionDiff{}, err
	}
	var am, bm map[string]any
	if a.Type != follow.Deleted {
		am = a.Object.Object
	}
	if b.Type != follow.Deleted {
		bm = b.Object.Object
	}
	d := diff.New(diff.Options{Ignore: [][]string{{"metadata", "resourceVersion"}, {"metadata", "managedFields"}}})
	changes := d.Objects(am, bm)
	if changes == nil {
		changes = []diff.Change{}
	}
	return VersionDiff{Ref: h.Ref, From: a.ResourceVersion, To: b.ResourceVersion, Changes: changes}, nil
}

// Summary lists the history's resourceVersions.
func (h *History) Summary() HistorySummary {
	s := HistorySummary{Ref: h.Ref, Deleted: h.Versions[len(h.Versions)-1].Type == follow.Deleted}
	for _, v := range h.Versions {
		s.ResourceVersions = append(s.ResourceVersions, v.ResourceVersion)
	}
	return s
}

// The reports of a Timeline, as kubectl rv watch --replay --list and --object print them
// (kinds ReplayList, ReplayObject and ReplayDiff: the command's name).

// HistoryList lists the recorded objects.
type HistoryList struct {
	Objects []HistorySummary `json:"objects"`
}

// List returns the recorded objects and their versions.
func (tl *Timeline) List() HistoryList {
	l := HistoryList{Objects: []HistorySummary{}}
	for _, h := range tl.Objects() {
		l.Objects = append(l.Objects, h.Summary())
	}
	return l
}

// HistorySummary lists one object's recorded versions.
type HistorySummary struct {
	Ref              string   `json:"ref"`
	ResourceVersions []string `json:"resourceVersions"`
	Deleted          bool     `json:"deleted"`
}

// VersionAt is one object as it was at a resourceVersion.
type VersionAt struct {
	Ref string `json:"ref"`
	Version
}

// VersionDiff is what changed in one object between two resourceVersions.
type VersionDiff struct {
	Ref  string `json:"ref"`
	From string `json:"from"`
	To   string `json:"to"`
	// Changes are the changed fields, never nil.
	Changes []diff.Change `json:"changes"`
}
