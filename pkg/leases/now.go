package leases

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// Clients are the API clients a look or a watch uses.
type Clients struct {
	// Dynamic lists and watches Leases and LeaseCandidates.
	Dynamic dynamic.Interface
	// Metadata lists the metadata of Endpoints and ConfigMaps, for the
	// annotation locks; nil leaves them out.
	Metadata metadata.Interface
}

// candidateVersions are the LeaseCandidate API's versions, newest first:
// v1beta1 since 1.33, v1alpha2 in 1.32 and 1.33 (both off by default).
var candidateVersions = []string{"v1beta1", "v1alpha2"}

// Discovery is what FindCandidateResource asks of discovery.
type Discovery interface {
	discovery.ServerGroupsInterface
	discovery.ServerResourcesInterface
}

// FindCandidateResource returns the LeaseCandidate resource the cluster
// serves, or nil when it serves none (coordinated leader election off,
// or a cluster older than 1.32): that is not an error. It asks for the
// versions of coordination.k8s.io the server lists, so that a version it
// does not serve is never requested (a cached discovery client does not
// answer those with a 404).
func FindCandidateResource(d Discovery) (*schema.GroupVersionResource, error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, fmt.Errorf("discovering API groups: %w", err)
	}
	served := map[string]bool{}
	for _, g := range groups.Groups {
		if g.Name != "coordination.k8s.io" {
			continue
		}
		for _, v := range g.Versions {
			served[v.Version] = true
		}
	}
	for _, v := range candidateVersions {
		if !served[v] {
			continue
		}
		gv := "coordination.k8s.io/" + v
		rl, err := d.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovering %s: %w", gv, err)
		}
		for _, r := range rl.APIResources {
			if r.Name == "leasecandidates" {
				return &schema.GroupVersionResource{Group: "coordination.k8s.io", Version: v, Resource: "leasecandidates"}, nil
			}
		}
	}
	return nil, nil
}

// Now looks at every lock once: the Leases, the annotation locks on
// Endpoints and ConfigMaps, and the LeaseCandidates of each Lease. A
// failure to list Leases is an error; Endpoints, ConfigMaps and
// LeaseCandidates that cannot be listed (a 403) are left out with a
// warning.
func Now(ctx context.Context, c Clients, cfg Config) (*Report, error) {
	now := cfg.now()
	rep := &Report{Mode: ModeNow, Start: now, End: now}
	warnf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		rep.Warnings = append(rep.Warnings, msg)
		cfg.warnf("%s", msg)
	}
	err := listPages(ctx, func(opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return resource(c.Dynamic, LeaseResource, cfg.Namespace).List(ctx, opts)
	}, func(u *unstructured.Unstructured) {
		if !cfg.wanted(u.GetNamespace(), u.GetName()) {
			return
		}
		ref := LockRef{Kind: KindLease, Namespace: u.GetNamespace(), Name: u.GetName()}
		r, err := LeaseRecord(u)
		if err != nil {
			warnf("lease %s: %v", ref, err)
		}
		rep.Locks = append(rep.Locks, lockOf(ref, r, now))
	})
	if err != nil {
		return nil, fmt.Errorf("listing leases: %w", err)
	}
	if c.Metadata != nil {
		for _, a := range []struct {
			kind LockKind
			gvr  schema.GroupVersionResource
		}{{KindEndpoints, EndpointsResource}, {KindConfigMap, ConfigMapResource}} {
			locks, err := annotationLocks(ctx, c.Metadata, a.gvr, a.kind, cfg, now, warnf)
			if err != nil {
				warnf("leaving %s locks out: %v", a.gvr.Resource, err)
			}
			rep.Locks = append(rep.Locks, locks...)
		}
	}
	if cfg.CandidateResource != nil {
		rep.CandidateAPI = cfg.CandidateResource.GroupVersion().String()
		if err := candidates(ctx, c.Dynamic, cfg, rep.Locks); err != nil {
			warnf("leaving LeaseCandidates out: %v", err)
		}
	}
	sortLocks(rep.Locks)
	rep.emptyLists()
	return rep, nil
}

func resource(d dynamic.Interface, gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns != "" {
		return d.Resource(gvr).Namespace(ns)
	}
	return d.Resource(gvr)
}

// listPages lists page by page (500 a page, as kubectl does), handing each
// item to fn.
func listPages(ctx context.Context, list func(metav1.ListOptions) (*unstructured.UnstructuredList, error), fn func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := list(opts)
		if err != nil {
			return err
		}
		for i := range l.Items {
			fn(&l.Items[i])
		}
		if l.GetContinue() == "" || ctx.Err() != nil {
			return ctx.Err()
		}
		opts.Continue = l.GetContinue()
	}
}

// annotationLocks lists the metadata of one resource and returns the
// objects that carry a leader-election annotation.
func annotationLocks(ctx context.Context, md metadata.Interface, gvr schema.GroupVersionResource, kind LockKind, cfg Config, now time.Time, warnf func(string, ...any)) ([]Lock, error) {
	var r metadata.ResourceInterface = md.Resource(gvr)
	if cfg.Namespace != "" {
		r = md.Resource(gvr).Namespace(cfg.Namespace)
	}
	var out []Lock
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := r.List(ctx, opts)
		if err != nil {
			return out, err
		}
		for _, it := range l.Items {
			v, ok := it.Annotations[AnnotationKey]
			if !ok || !cfg.wanted(it.Namespace, it.Name) {
				continue
			}
			ref := LockRef{Kind: kind, Namespace: it.Namespace, Name: it.Name}
			rec, err := AnnotationRecord(v)
			if err != nil {
				warnf("%s: %v", ref, err)
			}
			out = append(out, lockOf(ref, rec, now))
		}
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue = l.Continue
	}
}

// candidates lists the LeaseCandidates and attaches each to the Lease it
// names.
func candidates(ctx context.Context, d dynamic.Interface, cfg Config, locks []Lock) error {
	byLease := map[LockRef]*Lock{}
	for i := range locks {
		if locks[i].Kind == KindLease {
			byLease[locks[i].LockRef] = &locks[i]
		}
	}
	var bad error
	err := listPages(ctx, func(opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return resource(d, *cfg.CandidateResource, cfg.Namespace).List(ctx, opts)
	}, func(u *unstructured.Unstructured) {
		lease, c, err := CandidateOf(u)
		if err != nil {
			bad = fmt.Errorf("leasecandidate %s/%s: %w", u.GetNamespace(), u.GetName(), err)
			return
		}
		if l := byLease[LockRef{Kind: KindLease, Namespace: u.GetNamespace(), Name: lease}]; l != nil {
			l.Candidates = append(l.Candidates, c)
		}
	})
	if err != nil {
		return err
	}
	for _, l := range byLease {
		sort.Slice(l.Candidates, func(i, j int) bool { return l.Candidates[i].Name < l.Candidates[j].Name })
	}
	return bad
}

func sortLocks(ls []Lock) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i].LockRef, ls[j].LockRef
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Kind < b.Kind
	})
}
