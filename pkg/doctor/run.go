package doctor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// Clients are what doctor needs of the API server: the metadata client for
// every read (lists and watches of PartialObjectMetadata: no object bodies
// cross the wire), a dynamic client for the write probe and to find the
// cluster's other API servers, and a way to reach those.
type Clients struct {
	Metadata metadata.Interface
	// Dynamic is used only when WriteProbe is set, and to read the
	// kubernetes Service's endpoints when Peer is set and APIServers is not.
	Dynamic dynamic.Interface
	// Server is the URL Metadata and Dynamic reach (the kubeconfig's), which
	// is no peer.
	Server string
	// Peer returns a metadata client of another API server of the cluster
	// (its URL), with the same credentials, for cross-server-rvs; nil: Run
	// looks for no other server.
	Peer func(server string) (metadata.Interface, error)
}

// PreflightError is Run's error when the write probe cannot run: Err is
// ErrNoProbeNamespace or the server's refusal of the dry-run create.
type PreflightError struct{ Err error }

func (e *PreflightError) Error() string { return e.Err.Error() }

func (e *PreflightError) Unwrap() error { return e.Err }

// Run probes every type, cfg.Parallel at a time, and returns each check's
// verdict. It first finds the cluster's other API servers that answer, for
// cross-server-rvs (cfg.APIServers, or the kubernetes Service's endpoints;
// see findPeers): what it left out is in Report.Warnings, and told to
// cfg.Warn as soon as it is known. Only reads are sent, except with
// cfg.WriteProbe: then a dry-run create says next whether the probe can
// run (a PreflightError when it cannot, before any check), and the write
// probe runs after the reads. A type the user may not list gets a warning
// and no checks; Run fails otherwise only when no peer named in
// cfg.APIServers can be reached or given a client, and when ctx ends.
func Run(ctx context.Context, c Clients, types []apitypes.Type, cfg Config) (*Report, error) {
	peers, warnings, err := findPeers(ctx, c, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Warn != nil {
		for _, w := range warnings {
			cfg.Warn(w)
		}
	}
	if cfg.WriteProbe != "" {
		if err := PreflightWriteProbe(ctx, c.Dynamic, cfg.WriteProbe); err != nil {
			return nil, &PreflightError{Err: err}
		}
	}
	rep, err := probe(ctx, c.Metadata, peers, types, cfg)
	if err != nil {
		return nil, err
	}
	rep.Warnings = warnings
	if cfg.WriteProbe != "" {
		rep.writeProbe(ctx, c, cfg.WriteProbe, cfg)
	}
	return rep, nil
}

// probe runs the read checks of every type.
func probe(ctx context.Context, c metadata.Interface, peers []Peer, types []apitypes.Type, cfg Config) (*Report, error) {
	start := time.Now()
	rep := &Report{Resources: make([]Resource, len(types))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(cfg.Parallel, 1))
	for i, t := range types {
		g.Go(func() error {
			rep.Resources[i] = probeResource(gctx, c, peers, t, cfg)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.summarize()
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// writeProbe creates, updates twice and deletes one ConfigMap in namespace
// and adds the write-rvs-increase verdict to the configmaps row (a row of
// its own when configmaps were not probed).
func (r *Report) writeProbe(ctx context.Context, c Clients, namespace string, cfg Config) {
	check := writeProbe(ctx, c.Dynamic, namespace, cfg)
	for i := range r.Resources {
		if res := &r.Resources[i]; res.Group == "" && res.Resource == "configmaps" && res.Warning == "" {
			res.Checks = append(res.Checks, check)
			r.summarize()
			return
		}
	}
	res := Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Checks: []Check{check}}
	r.Resources = append(r.Resources, res)
	r.summarize()
}

func (r *Report) summarize() {
	s := Summary{Resources: len(r.Resources)}
	for _, res := range r.Resources {
		switch {
		case res.Gone:
			s.Gone++
		case res.Unreachable:
			s.Unreachable++
		case res.Warning != "":
			s.Forbidden++
		}
		s.Pass += res.Count(Pass)
		s.Fail += res.Count(Fail)
		s.Warn += res.Count(Warn)
		s.Skip += res.Count(Skip)
	}
	r.Summary = s
}

// prober runs the checks on one resource. Its checks run one after the
// other, so its fields need no lock.
type prober struct {
	ri  metadata.ResourceInterface
	cfg Config
	// storageServed says kube-apiserver serves the type's watches from
	// storage, without a watch cache.
	storageServed bool
	peers         []peerClient
	// expired is the exact list at expiredRV, once asked.
	expired *listed
	// watches are what every watch of the resource delivered, for
	// watch-events-have-rv.
	watches []*watched
}

func (p *prober) on(id string) bool {
	return len(p.cfg.Checks) == 0 || p.asked(id)
}

// asked reports whether --check named id: checks that apply to few types
// (or need --api-servers) say why they were skipped only then.
func (p *prober) asked(id string) bool { return slices.Contains(p.cfg.Checks, id) }

func probeResource(ctx context.Context, c metadata.Interface, peers []Peer, t apitypes.Type, cfg Config) Resource {
	res := newResource(t)
	p := &prober{ri: resourceClient(c, t, cfg.Namespace), cfg: cfg, storageServed: servedByStorage(t)}
	for _, peer := range peers {
		p.peers = append(p.peers, peerClient{server: peer.Server, ri: resourceClient(peer.Metadata, t, cfg.Namespace)})
	}
	base := list(ctx, p.ri, metav1.ListOptions{})
	switch {
	case base.err != nil && isForbidden(base.err):
		res.Warning = fmt.Sprintf("not probed: %v", base.err)
		return res
	case unreachable(base.err):
		res.Unreachable = true
		res.Warning = fmt.Sprintf("not probed: unreachable (a consistent list did not answer: %v)", base.err)
		return res
	}
	checks := p.probeLists(ctx, base)
	if base.err == nil {
		checks = append(checks, p.probeWatches(ctx, base.list)...)
		if p.on(CrossServerRVs) && (len(p.peers) > 0 || p.asked(CrossServerRVs)) {
			checks = append(checks, p.checkCrossServer(ctx, base.list.ResourceVersion))
		}
		if p.on(ConsistentLatency) {
			checks = append(checks, p.checkLatency(ctx))
		}
	}
	for _, ch := range checks {
		if p.on(ch.ID) {
			res.Checks = append(res.Checks, ch)
		}
	}
	if res.Count(Fail) > 0 {
		p.unlessGone(ctx, &res)
	}
	return res
}

// unlessGone asks once more for a resource that failed a check: when a list
// now answers 404 the resource was removed during the run (a custom resource
// definition deleted meanwhile ends its watches and answers 404 to the
// rest), and its verdicts are dropped for a warning that says so.
func (p *prober) unlessGone(ctx context.Context, res *Resource) {
	l := list(ctx, p.ri, metav1.ListOptions{Limit: 1})
	if !apierrors.IsNotFound(l.err) {
		return
	}
	res.Checks, res.Gone = nil, true
	res.Warning = fmt.Sprintf("not probed: removed during the run (a list now answers 404: %v)", l.err)
}

func resourceClient(c metadata.Interface, t apitypes.Type, namespace string) metadata.ResourceInterface {
	r := c.Resource(t.Resource)
	if t.Namespaced && namespace != "" {
		return r.Namespace(namespace)
	}
	return r
}
