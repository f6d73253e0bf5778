package predict

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Target is one object to predict, before it is matched to its live
// object: a desired manifest (Input.Desired, whose kind is GVK) or a patch
// to TYPE/NAME (Input.Patch; Input.Ref.Kind is TYPE as the user wrote it,
// and GVK is empty until matching resolves it).
type Target struct {
	Input Input
	GVK   schema.GroupVersionKind
}

// Where names the target in messages: the file and line it was read from,
// else its kind and name.
func (t Target) Where() string {
	if t.Input.Ref.Source != "" {
		return t.Input.Ref.Source
	}
	return t.Input.Ref.String()
}

// DefaultNamespace is the namespace of objects that name none.
type DefaultNamespace struct {
	Name string
	// Explicit is true when the user chose Name (kubectl's -n): an object
	// naming another namespace is then a mistake.
	Explicit bool
}

// NamespaceError says that an object names another namespace than the one
// the user chose.
type NamespaceError struct {
	// Where names the object, as Target.Where does.
	Where string
	// Namespace is the object's, Want the one the user chose.
	Namespace, Want string
}

func (e *NamespaceError) Error() string {
	return fmt.Sprintf("%s: the object's namespace %q does not match -n %q", e.Where, e.Namespace, e.Want)
}

// NoLiveObjectError says that the live objects hold no TYPE/NAME for a
// patch to predict.
type NoLiveObjectError struct {
	// Type and Name are as the user wrote them.
	Type, Name string
}

func (e *NoLiveObjectError) Error() string {
	return fmt.Sprintf("no live object %s/%s", e.Type, e.Name)
}

// VersionError says that a manifest and its live object have different
// versions of one kind: the offline engine does not convert.
type VersionError struct {
	// Where names the manifest, as Target.Where does.
	Where string
	// Manifest is the manifest's kind; Live the live object.
	Manifest schema.GroupVersionKind
	Live     *unstructured.Unstructured
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s: the live object is %s, the manifest %s: offline prediction cannot convert between versions", e.Where, e.Live.GroupVersionKind(), e.Manifest)
}

// LiveSet holds the live objects of an offline prediction (saved with
// kubectl get -o yaml --show-managed-fields), indexed for matching.
type LiveSet struct {
	objs    []*unstructured.Unstructured
	resolve KindResolver
	byKey   map[liveKey]*unstructured.Unstructured
}

type liveKey struct {
	groupKind, namespace, name string
}

// KindResolver resolves TYPE as typed on the command line (deployment,
// deployments, Deployment, deployments.apps) to a group and kind. pkg/cmd
// passes its one resolver, run over the kinds the live objects have.
type KindResolver func(typ string) (schema.GroupKind, error)

// NewLiveSet indexes live objects; of two with the same kind, namespace
// and name the last wins. resolve reads a patch's TYPE.
func NewLiveSet(objs []*unstructured.Unstructured, resolve KindResolver) *LiveSet {
	s := &LiveSet{objs: objs, resolve: resolve, byKey: make(map[liveKey]*unstructured.Unstructured, len(objs))}
	for _, u := range objs {
		s.byKey[liveKey{u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName()}] = u
	}
	return s
}

// byTypeName finds TYPE/NAME. With an explicit namespace, a namespaced
// object must be in it.
func (s *LiveSet) byTypeName(typ, name string, ns DefaultNamespace) *unstructured.Unstructured {
	gk, err := s.resolve(typ)
	if err != nil {
		return nil
	}
	for _, u := range s.objs {
		if u.GetName() != name || u.GroupVersionKind().GroupKind() != gk || (ns.Explicit && u.GetNamespace() != "" && u.GetNamespace() != ns.Name) {
			continue
		}
		return u
	}
	return nil
}

// ExecutorFunc returns the executor of one object from its live state
// (nil when it does not exist yet), such as Offline.Executor.
type ExecutorFunc func(gvk schema.GroupVersionKind, name string, live *unstructured.Unstructured) (Executor, error)

// MatchOffline pairs every target with its live object among lives and
// returns the items to predict, in the targets' order, with the executors
// newExecutor makes.
//
// A patch's TYPE/NAME must be among lives (else a *NoLiveObjectError), and
// takes the live object's kind and name. A manifest is matched by group,
// kind, namespace and name; one without a namespace is looked up in its own
// (none) first, then in ns. A manifest without a live object is a create:
// one without a namespace goes to ns when its kind is namespaced, as
// kubectl sends it (the desired object is copied to say so). scope tells
// (nil: nothing), else the live objects of the kind do; where neither
// tells, the manifest's own namespace (none) stands.
// The live object must have the manifest's version: offline prediction
// does not convert.
func MatchOffline(targets []Target, lives *LiveSet, ns DefaultNamespace, scope ScopeFunc, newExecutor ExecutorFunc) ([]Item, error) {
	items := make([]Item, 0, len(targets))
	for _, t := range targets {
		live, err := lives.match(&t, ns, scope)
		if err != nil {
			return nil, err
		}
		ex, err := newExecutor(t.GVK, t.Input.Ref.Name, live)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Where(), err)
		}
		items = append(items, Item{Input: t.Input, Executor: ex})
	}
	return items, nil
}

// ScopeFunc reports whether the objects of kind gvk are namespaced, and
// whether it knows (Offline.Namespaced).
type ScopeFunc func(gvk schema.GroupVersionKind) (namespaced, known bool)

// namespaced says whether kind gvk is namespaced, and whether that is
// known: scope's answer, else what the live objects of the kind show.
func (s *LiveSet) namespaced(gvk schema.GroupVersionKind, scope ScopeFunc) (namespaced, known bool) {
	if scope != nil {
		if ns, ok := scope(gvk); ok {
			return ns, true
		}
	}
	for _, u := range s.objs {
		if u.GroupVersionKind().GroupKind() == gvk.GroupKind() {
			return u.GetNamespace() != "", true
		}
	}
	return false, false
}

// match finds t's live object, completing t with what the match tells.
func (s *LiveSet) match(t *Target, ns DefaultNamespace, scope ScopeFunc) (*unstructured.Unstructured, error) {
	ref := &t.Input.Ref
	if t.Input.Patch != nil {
		if ref.Namespace != "" {
			// TYPE/NAMESPACE/NAME: its namespace, which -n may not contradict.
			if ns.Explicit && ns.Name != ref.Namespace {
				return nil, &NamespaceError{Where: t.Where(), Namespace: ref.Namespace, Want: ns.Name}
			}
			ns = DefaultNamespace{Name: ref.Namespace, Explicit: true}
		}
		live := s.byTypeName(ref.Kind, ref.Name, ns)
		if live == nil {
			return nil, &NoLiveObjectError{Type: ref.Kind, Name: ref.Name}
		}
		t.GVK = live.GroupVersionKind()
		*ref = ObjectRef{APIVersion: live.GetAPIVersion(), Kind: live.GetKind(), Namespace: live.GetNamespace(), Name: live.GetName()}
		return live, nil
	}
	gk := t.GVK.GroupKind().String()
	live := s.byKey[liveKey{gk, ref.Namespace, ref.Name}]
	if live == nil && ref.Namespace == "" {
		live = s.byKey[liveKey{gk, ns.Name, ref.Name}]
		if live != nil {
			ref.Namespace = ns.Name
		}
	}
	if live != nil && live.GroupVersionKind() != t.GVK {
		return nil, &VersionError{Where: t.Where(), Manifest: t.GVK, Live: live}
	}
	if live == nil && ref.Namespace == "" {
		if namespaced, _ := s.namespaced(t.GVK, scope); namespaced {
			ref.Namespace = ns.Name
			t.Input.Desired = t.Input.Desired.DeepCopy()
			t.Input.Desired.SetNamespace(ns.Name)
		}
	}
	return live, nil
}

// Cluster is what matching targets to their objects on a cluster needs:
// pkg/cmd implements it with its REST mapper and dynamic client. MatchCluster
// passes the errors it returns on, wrapped only to name the target of a
// no-match error, so that the caller can classify them.
type Cluster interface {
	// KindFor resolves the TYPE of a patch's TYPE/NAME (deploy,
	// deployments.apps) to a kind the cluster serves.
	KindFor(typ string) (schema.GroupVersionKind, error)
	// RESTMapping returns the resource and scope of a kind.
	RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
	// Resource returns the client of a resource.
	Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface
}

// MatchCluster resolves every target on the cluster and returns the items
// to predict, in the targets' order, with server (dry-run) executors.
//
// A patch's TYPE is resolved to a kind. A namespaced object without a
// namespace goes to ns (the desired object is copied to say so); one
// naming another namespace than an explicit ns is a *NamespaceError. A
// kind the cluster does not serve is an error naming the target and
// wrapping the REST mapper's no-match error.
func MatchCluster(targets []Target, ns DefaultNamespace, c Cluster) ([]Item, error) {
	items := make([]Item, 0, len(targets))
	for _, t := range targets {
		ri, err := matchCluster(&t, ns, c)
		if err != nil {
			return nil, err
		}
		items = append(items, Item{Input: t.Input, Executor: Server(ri, t.Input.Ref.Name)})
	}
	return items, nil
}

// matchCluster returns the client of t's object, completing t with its
// kind and namespace.
func matchCluster(t *Target, ns DefaultNamespace, c Cluster) (dynamic.ResourceInterface, error) {
	in := &t.Input
	if in.Patch != nil {
		gvk, err := c.KindFor(in.Ref.Kind)
		if err != nil {
			return nil, err
		}
		t.GVK = gvk
		in.Ref.Kind, in.Ref.APIVersion = gvk.Kind, gvk.GroupVersion().String()
	}
	mapping, err := c.RESTMapping(t.GVK)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("%s: the cluster does not serve %s: %w", t.Where(), t.GVK, err)
		}
		return nil, err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.Resource(mapping.Resource), nil
	}
	switch {
	case in.Ref.Namespace == "":
		in.Ref.Namespace = ns.Name
		if in.Desired != nil {
			in.Desired = in.Desired.DeepCopy()
			in.Desired.SetNamespace(ns.Name)
		}
	case ns.Explicit && in.Ref.Namespace != ns.Name:
		return nil, &NamespaceError{Where: t.Where(), Namespace: in.Ref.Namespace, Want: ns.Name}
	}
	return c.Resource(mapping.Resource).Namespace(in.Ref.Namespace), nil
}
