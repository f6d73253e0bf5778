package owners

import (
	"container/heap"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// MaxUpdateManagers is the API server's cap on Update entries: beyond it,
// the oldest are merged into an ancient-changes entry (one per apiVersion)
// and who wrote those fields is lost (apiserver capManagersManager).
const MaxUpdateManagers = 10

// SizeConfig tunes the managedFields weight scan. NewSizeConfig fills the
// defaults.
type SizeConfig struct {
	// Top is how many of the heaviest objects (by managedFields bytes) the
	// report keeps; the per-kind aggregates count every object.
	Top int
	// NearCapMargin: an object with at least MaxUpdateManagers-NearCapMargin
	// Update entries is near the cap.
	NearCapMargin int
	// MaxStems is how many generated-name stems each kind keeps, the most
	// frequent first.
	MaxStems int
}

// The size scan's defaults.
const (
	DefaultSizeTop       = 10
	DefaultNearCapMargin = 2
	DefaultMaxStems      = 5
)

// NewSizeConfig returns the defaults: the top 10 objects, near the cap
// from 8 Update entries, 5 stems per kind.
func NewSizeConfig() SizeConfig {
	return SizeConfig{Top: DefaultSizeTop, NearCapMargin: DefaultNearCapMargin, MaxStems: DefaultMaxStems}
}

// ObjectSize is the managedFields weight of one object.
type ObjectSize struct {
	Kind      string `json:"kind"` // Kind.group, e.g. Deployment.apps
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// ObjectBytes and ManagedFieldsBytes are the sizes of the compact JSON
	// encoding of the whole object and of its metadata.managedFields.
	ObjectBytes        int `json:"objectBytes"`
	ManagedFieldsBytes int `json:"managedFieldsBytes"`
	Entries            int `json:"entries"`
	UpdateEntries      int `json:"updateEntries"`
	// NearCap is true when UpdateEntries is within the margin of
	// MaxUpdateManagers; AncientChanges when the server already merged some.
	NearCap        bool `json:"nearCap"`
	AncientChanges bool `json:"ancientChanges"`
	// GeneratedApply are the Apply managers whose names end in a generated
	// suffix (a pod name, a random suffix, a UUID, a hash): one per pod or
	// run, so their entries grow without bound.
	GeneratedApply []string `json:"generatedApply,omitempty"`
}

// Share is ManagedFieldsBytes as a fraction of ObjectBytes.
func (o ObjectSize) Share() float64 { return share(o.ManagedFieldsBytes, o.ObjectBytes) }

func share(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return float64(part) / float64(whole)
}

// KindSize aggregates the objects of one kind.
type KindSize struct {
	Kind               string `json:"kind"`
	Objects            int    `json:"objects"`
	ObjectBytes        int64  `json:"objectBytes"`
	ManagedFieldsBytes int64  `json:"managedFieldsBytes"`
	Entries            int64  `json:"entries"`
	MaxEntries         int    `json:"maxEntries"`
	NearCapObjects     int    `json:"nearCapObjects"`
	AncientObjects     int    `json:"ancientChangesObjects"`
	// GeneratedApplyEntries counts the Apply entries with generated manager
	// names, in GeneratedObjects objects.
	GeneratedApplyEntries int `json:"generatedApplyEntries"`
	GeneratedObjects      int `json:"generatedApplyObjects"`
	// GeneratedStems are the most frequent generated names without their
	// suffix, with how many entries each has.
	GeneratedStems []StemCount `json:"generatedStems,omitempty"`
	// NoManagedFields counts objects without managedFields (not weighed).
	NoManagedFields int `json:"noManagedFields,omitempty"`

	stems map[string]int
}

// StemCount is a generated manager name's stem and its number of entries.
type StemCount struct {
	Stem    string `json:"stem"`
	Entries int    `json:"entries"`
}

// Share is ManagedFieldsBytes as a fraction of ObjectBytes.
func (k KindSize) Share() float64 {
	if k.ObjectBytes == 0 {
		return 0
	}
	return float64(k.ManagedFieldsBytes) / float64(k.ObjectBytes)
}

// SizeReport is the managedFields weight of a set of objects: per kind,
// and the heaviest objects.
type SizeReport struct {
	Kinds []KindSize `json:"kinds"`
	// Top are the heaviest objects by managedFields bytes, heaviest first.
	Top []ObjectSize `json:"top"`
}

// Visitor calls fn for every selected object, as a stream (a page at a
// time from the cluster): Size keeps no object.
type Visitor func(ctx context.Context, fn func(*unstructured.Unstructured) error) error

// Size weighs the managedFields of every object visit yields, keeping
// per-kind aggregates and the cfg.Top heaviest objects only, so that its
// memory does not grow with the number of objects.
func Size(ctx context.Context, cfg SizeConfig, visit Visitor) (*SizeReport, error) {
	s := &sizer{cfg: cfg, kinds: map[string]*KindSize{}}
	err := visit(ctx, s.add)
	rep := s.report()
	return rep, err
}

type sizer struct {
	cfg     SizeConfig
	kinds   map[string]*KindSize
	top     sizeHeap
	scratch []byte
}

func (s *sizer) add(u *unstructured.Unstructured) error {
	gvk := u.GroupVersionKind()
	kind := gvk.GroupKind().String()
	k := s.kinds[kind]
	if k == nil {
		k = &KindSize{Kind: kind, stems: map[string]int{}}
		s.kinds[kind] = k
	}
	mfs, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	raw, _ := mfs.([]any)
	if len(raw) == 0 {
		k.NoManagedFields++
		return nil
	}
	o, err := weigh(u, raw, s.cfg, &s.scratch)
	if err != nil {
		return err
	}
	o.Kind = kind
	k.add(o, s.cfg.MaxStems)
	if s.cfg.Top > 0 {
		if len(s.top) < s.cfg.Top {
			heap.Push(&s.top, o)
		} else if lighter(s.top[0], o) {
			s.top[0] = o
			heap.Fix(&s.top, 0)
		}
	}
	return nil
}

// weigh measures one object.
func weigh(u *unstructured.Unstructured, raw []any, cfg SizeConfig, scratch *[]byte) (ObjectSize, error) {
	o := ObjectSize{Namespace: u.GetNamespace(), Name: u.GetName(), Entries: len(raw)}
	var err error
	if o.ObjectBytes, err = jsonLen(u.Object, scratch); err != nil {
		return o, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	if o.ManagedFieldsBytes, err = jsonLen(raw, scratch); err != nil {
		return o, fmt.Errorf("%s %s: managedFields: %w", u.GetKind(), u.GetName(), err)
	}
	for _, r := range raw {
		m, _ := r.(map[string]any)
		manager, _ := m["manager"].(string)
		op, _ := m["operation"].(string)
		switch metav1.ManagedFieldsOperationType(op) {
		case metav1.ManagedFieldsOperationUpdate:
			o.UpdateEntries++
			o.AncientChanges = o.AncientChanges || manager == managedfields.AncientChangesManager
		case metav1.ManagedFieldsOperationApply:
			if _, ok := GeneratedStem(manager); ok {
				o.GeneratedApply = append(o.GeneratedApply, manager)
			}
		}
	}
	o.NearCap = o.UpdateEntries >= MaxUpdateManagers-cfg.NearCapMargin
	return o, nil
}

func (k *KindSize) add(o ObjectSize, maxStems int) {
	k.Objects++
	k.ObjectBytes += int64(o.ObjectBytes)
	k.ManagedFieldsBytes += int64(o.ManagedFieldsBytes)
	k.Entries += int64(o.Entries)
	k.MaxEntries = max(k.MaxEntries, o.Entries)
	if o.NearCap {
		k.NearCapObjects++
	}
	if o.AncientChanges {
		k.AncientObjects++
	}
	if len(o.GeneratedApply) > 0 {
		k.GeneratedObjects++
		k.GeneratedApplyEntries += len(o.GeneratedApply)
	}
	for _, m := range o.GeneratedApply {
		stem, _ := GeneratedStem(m)
		if _, ok := k.stems[stem]; ok || len(k.stems) < 64*maxStems {
			// Bounded: a kind with thousands of stems keeps the first ones.
			k.stems[stem]++
		}
	}
}

func (s *sizer) report() *SizeReport {
	rep := &SizeReport{Kinds: make([]KindSize, 0, len(s.kinds)), Top: make([]ObjectSize, len(s.top))}
	for _, k := range s.kinds {
		for stem, n := range k.stems {
			k.GeneratedStems = append(k.GeneratedStems, StemCount{Stem: stem, Entries: n})
		}
		sort.Slice(k.GeneratedStems, func(i, j int) bool {
			a, b := k.GeneratedStems[i], k.GeneratedStems[j]
			return a.Entries > b.Entries || a.Entries == b.Entries && a.Stem < b.Stem
		})
		if len(k.GeneratedStems) > s.cfg.MaxStems {
			k.GeneratedStems = k.GeneratedStems[:s.cfg.MaxStems]
		}
		rep.Kinds = append(rep.Kinds, *k)
	}
	sort.Slice(rep.Kinds, func(i, j int) bool {
		a, b := rep.Kinds[i], rep.Kinds[j]
		return a.ManagedFieldsBytes > b.ManagedFieldsBytes || a.ManagedFieldsBytes == b.ManagedFieldsBytes && a.Kind < b.Kind
	})
	for i := len(s.top) - 1; i >= 0; i-- {
		rep.Top[i] = heap.Pop(&s.top).(ObjectSize)
	}
	return rep
}

// lighter orders objects by managedFields bytes, then by name (so that the
// top list does not depend on the listing order).
func lighter(a, b ObjectSize) bool {
	if a.ManagedFieldsBytes != b.ManagedFieldsBytes {
		return a.ManagedFieldsBytes < b.ManagedFieldsBytes
	}
	return objectKey(a) > objectKey(b)
}

func objectKey(o ObjectSize) string { return o.Kind + "/" + o.Namespace + "/" + o.Name }

// sizeHeap is a min-heap: the lightest of the kept objects on top.
type sizeHeap []ObjectSize

func (h sizeHeap) Len() int           { return len(h) }
func (h sizeHeap) Less(i, j int) bool { return lighter(h[i], h[j]) }
func (h sizeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sizeHeap) Push(x any)        { *h = append(*h, x.(ObjectSize)) }
func (h *sizeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// generatedSuffix matches the suffixes Kubernetes and CI systems generate,
// at the end of a name after a separator:
//
//	web-7d9c8b6f5d-x2k9q   a Deployment's pod: pod-template-hash and random suffix
//	job-x2k9q              generateName's 5 characters (no vowels, no 0 1 3)
//	run-6f1c2a9e-...-...   a UUID
//	deploy-3f9a1c7         a hex hash of 7 or more digits, with a digit
//	build-1732455821       a number of 6 or more digits (a run ID, a timestamp)
var generatedSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-_.](?:` +
		`[bcdfghjklmnpqrstvwxz2456789]{6,10}[-_.][bcdfghjklmnpqrstvwxz2456789]{5}` +
		`|[bcdfghjklmnpqrstvwxz2456789]{5}` +
		`|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}` +
		`|[0-9a-f]*[0-9][0-9a-f]*` +
		`)$`)
})

// GeneratedStem reports whether a manager name ends in a generated suffix
// (see generatedSuffix), and the name without it: managers named after a
// pod or a run are new with every pod or run, so their entries pile up.
func GeneratedStem(name string) (string, bool) {
	loc := generatedSuffix().FindStringIndex(name)
	if loc == nil || loc[0] == 0 {
		return "", false
	}
	suffix := name[loc[0]+1:]
	if isHexOrNumber(suffix) && !hexLongEnough(suffix) && !randomSuffix(suffix) {
		return "", false
	}
	return name[:loc[0]], true
}

// randomSuffix reports whether s is generateName's suffix: five characters
// of Kubernetes' random alphabet (k8s.io/apimachinery/pkg/util/rand).
func randomSuffix(s string) bool {
	return len(s) == 5 && strings.Trim(s, "bcdfghjklmnpqrstvwxz2456789") == ""
}

func isHexOrNumber(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// hexLongEnough keeps short hex or numeric suffixes (v2, 2024, cafe) out:
// a hash has 7 or more hex digits, a run ID or timestamp 6 or more digits.
func hexLongEnough(s string) bool {
	if strings.Trim(s, "0123456789") == "" {
		return len(s) >= 6
	}
	return len(s) >= 7
}
