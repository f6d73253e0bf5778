package doctor

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Peer is another API server of the same cluster (a replica behind the
// same load balancer), reached directly.
type Peer struct {
	// Server is its URL, for messages.
	Server string
	// Metadata reads through it.
	Metadata metadata.Interface
}

// checkCrossServer holds the API servers of one cluster to the rule that
// lets clients fail over between them: a resourceVersion a client read from
// one is never "too large" for another, nor newer than what another lists a
// moment later. rv is the consistent list's version on the main server.
func (p *prober) checkCrossServer(ctx context.Context, rv string) Check {
	if len(p.peers) == 0 {
		return skip(CrossServerRVs, "one API server known: name the others with --api-servers (or make the kubernetes Service's endpoints reachable)")
	}
	var seen []string
	for _, peer := range p.peers {
		phrase, bad := p.crossOne(ctx, peer, rv)
		if bad != nil {
			return *bad
		}
		seen = append(seen, phrase)
	}
	return pass(CrossServerRVs, strings.Join(seen, "; "), "servers", itoa(int32(len(p.peers)+1)))
}

// crossOne compares the main server with one peer, both ways. It returns
// a phrase of what it saw, or the verdict that ends the check.
func (p *prober) crossOne(ctx context.Context, peer peerClient, mainRV string) (string, *Check) {
	verdict := func(c Check) (string, *Check) { return "", &c }
	other := list(ctx, peer.ri, metav1.ListOptions{})
	if other.err != nil {
		return verdict(peerFailure(peer.server, other.err, "a consistent list"))
	}
	peerRV := other.list.ResourceVersion
	if c := compareOrZero(peerRV, mainRV); c < 0 {
		return verdict(fail(CrossServerRVs, fmt.Sprintf("%s answered a consistent list with resourceVersion %s after the main server had answered %s: a client that fails over reads the past",
			peer.server, peerRV, mainRV), "server", peer.server, "main", mainRV, "peer", peerRV))
	}
	for _, dir := range []struct {
		ri       metadata.ResourceInterface
		at, from string
		rv       string
	}{{peer.ri, peer.server, "the main server", mainRV}, {p.ri, "the main server", peer.server, peerRV}} {
		l := list(ctx, dir.ri, metav1.ListOptions{ResourceVersion: dir.rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 1})
		switch {
		case unreachable(l.err):
			return verdict(peerFailure(dir.at, l.err, "a list not older than "+dir.rv))
		case l.err != nil:
			return verdict(fail(CrossServerRVs, fmt.Sprintf("%s answered a list not older than %s (read from %s) with %d: %v: a client that fails over to it cannot go on from where it was",
				dir.at, dir.rv, dir.from, statusCode(l.err), l.err), "server", peer.server, "asked", dir.rv, "code", itoa(statusCode(l.err))))
		case compareOrZero(l.list.ResourceVersion, dir.rv) < 0:
			return verdict(fail(CrossServerRVs, fmt.Sprintf("%s answered a list not older than %s (read from %s) with the older %s", dir.at, dir.rv, dir.from, l.list.ResourceVersion),
				"server", peer.server, "asked", dir.rv, "got", l.list.ResourceVersion))
		}
	}
	return fmt.Sprintf("%s: consistent %s after the main server's %s, and each answers not-older-than the other's", peer.server, peerRV, mainRV), nil
}

// peerFailure: a peer that cannot be reached says nothing about the
// contract (a warn); any other error is a failure.
func peerFailure(server string, err error, what string) Check {
	if unreachable(err) {
		return warn(CrossServerRVs, fmt.Sprintf("unreachable: %s on %s failed: %v", what, server, err), "server", server, "unreachable", "true")
	}
	return fail(CrossServerRVs, fmt.Sprintf("%s on %s failed: %v", what, server, err), "server", server, "code", itoa(statusCode(err)))
}

// peerClient is a peer's client for one resource.
type peerClient struct {
	server string
	ri     metadata.ResourceInterface
}

// endpointSlices are where every API server of a cluster registers its
// address (the lease endpoint reconciler).
var endpointSlices = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}

// ServiceEndpoints returns the https URLs of the API servers that the
// kubernetes Service in default lists, except self (the URL doctor already
// talks to, compared by host and port). One endpoint is one API server,
// whatever its address (kind and minikube list the node's address while
// the kubeconfig names a forwarded port): that is no peer. On most clusters
// these addresses are reachable only from inside; findPeers keeps
// those that answer.
func ServiceEndpoints(ctx context.Context, c dynamic.Interface, self string) ([]string, error) {
	l, err := c.Resource(endpointSlices).Namespace(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, s := range l.Items {
		var slice discoveryv1.EndpointSlice
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s.Object, &slice); err != nil {
			return nil, fmt.Errorf("endpointslice %s: %w", s.GetName(), err)
		}
		for _, port := range slice.Ports {
			if port.Port == nil || (port.Name != nil && *port.Name != "https") {
				continue
			}
			for _, ep := range slice.Endpoints {
				for _, addr := range ep.Addresses {
					host := net.JoinHostPort(addr, strconv.Itoa(int(*port.Port)))
					if !seen[host] {
						seen[host] = true
						out = append(out, "https://"+host)
					}
				}
			}
		}
	}
	if len(out) < 2 {
		return nil, nil
	}
	slices.Sort(out)
	return slices.DeleteFunc(out, func(u string) bool { return hostOf(u) == hostOf(self) }), nil
}

func hostOf(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(host, port)
}

// findPeers returns the cluster's other API servers that answer from here,
// for cross-server-rvs: cfg.APIServers, or else the kubernetes Service's
// endpoints, unless cfg.Checks leaves the check out. It looks for none
// when c.Peer is nil. Its warnings say which servers it left out and why;
// it fails when a server cannot be given a client (exit 2) or when none of
// cfg.APIServers answers (exit 3).
func findPeers(ctx context.Context, c Clients, cfg Config) ([]Peer, []string, error) {
	servers, explicit := cfg.APIServers, len(cfg.APIServers) > 0
	if c.Peer == nil || !explicit && len(cfg.Checks) > 0 && !slices.Contains(cfg.Checks, CrossServerRVs) {
		return nil, nil, nil
	}
	if !explicit {
		found, err := ServiceEndpoints(ctx, c.Dynamic, c.Server)
		if err != nil {
			// Finding them is a courtesy: a user who may not list
			// endpointslices still gets every other check.
			return nil, []string{fmt.Sprintf("the kubernetes Service's endpoints could not be read (%v): cross-server-rvs needs --api-servers", err)}, nil
		}
		servers = found
	}
	var peers []Peer
	for _, s := range servers {
		m, err := c.Peer(s)
		if err != nil {
			return nil, nil, exitcode.Usagef("--api-servers %q: %v", s, err)
		}
		peers = append(peers, Peer{Server: s, Metadata: m})
	}
	peers, dropped := dropUnreachable(ctx, peers, cfg.PeerTimeout)
	var warnings []string
	switch {
	case explicit:
		for _, s := range cfg.APIServers {
			if err, ok := dropped[s]; ok {
				warnings = append(warnings, fmt.Sprintf("--api-servers %s did not answer (%v): cross-server-rvs leaves it out", s, err))
			}
		}
		if len(peers) == 0 {
			return nil, nil, exitcode.Cluster(fmt.Errorf("no server of --api-servers answered: %s", strings.Join(warnings, "; ")))
		}
	case len(dropped) > 0:
		warnings = append(warnings, fmt.Sprintf("the kubernetes Service lists %s not reachable from here: cross-server-rvs checks only the ones that answer; name reachable addresses with --api-servers",
			text.Plural(len(dropped), "API server")))
	}
	return peers, warnings, nil
}

// dropUnreachable keeps the peers that answer a small list within timeout,
// asking them all at once, and returns the errors of the others.
func dropUnreachable(ctx context.Context, peers []Peer, timeout time.Duration) ([]Peer, map[string]error) {
	errs := make([]error, len(peers))
	var g errgroup.Group
	for i, p := range peers {
		g.Go(func() error {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, errs[i] = p.Metadata.Resource(namespaces).List(pctx, metav1.ListOptions{Limit: 1})
			return nil
		})
	}
	_ = g.Wait()
	var kept []Peer
	dropped := map[string]error{}
	for i, p := range peers {
		if errs[i] != nil {
			dropped[p.Server] = errs[i]
			continue
		}
		kept = append(kept, p)
	}
	return kept, dropped
}

var namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
