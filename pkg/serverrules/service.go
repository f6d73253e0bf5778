package serverrules

import (
	"fmt"
	"slices"

	"k8s.io/kubernetes/pkg/apis/core"
)

// placeholderClusterIP stands for the address the server's allocator would
// pick: validation checks an allocated address's form and family, and
// which address the cluster hands out is cluster state, unknown offline.
const placeholderClusterIP = "10.0.0.1"

// prepareService readies a Service for validation the way the service
// storage does before it validates (k8s.io/kubernetes/pkg/registry/core/
// service/storage: beginCreate, beginUpdate) and the strategy's
// PrepareForUpdate: on update, allocated values the request left out are
// taken from the stored Service (patchAllocatedValues) and values a type
// change makes moot are wiped (dropTypeDependentFields); then the
// allocator's part is stood in for: a single-stack IPv4 address where one
// is needed. old is nil on create. It returns the allocator's error for
// two ports with one node port on one protocol (a 500 on the server).
func prepareService(svc, o *core.Service) error {
	if o != nil {
		patchAllocatedValues(svc, o)
		normalizeUpdatedClusterIPs(svc, o)
		dropTypeDependentFields(svc, o)
	} else if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	if err := duplicateNodePort(svc); err != nil {
		return err
	}
	if !needsClusterIP(svc) {
		return nil
	}
	if svc.Spec.IPFamilyPolicy == nil {
		p := core.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &p
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []core.IPFamily{core.IPv4Protocol}
	}
	if svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIP = placeholderClusterIP
		svc.Spec.ClusterIPs = []string{placeholderClusterIP}
	}
	return nil
}

// duplicateNodePort is the allocator's check (updateNodePorts,
// initNodePorts) that no two ports of a NodePort or LoadBalancer Service
// ask for the same node port on the same protocol; ports without one get
// fresh ones.
func duplicateNodePort(svc *core.Service) error {
	if svc.Spec.Type != core.ServiceTypeNodePort && svc.Spec.Type != core.ServiceTypeLoadBalancer {
		return nil
	}
	type nodePort struct {
		Protocol core.Protocol
		NodePort int32
	}
	seen := map[nodePort]bool{}
	for _, p := range svc.Spec.Ports {
		np := nodePort{p.Protocol, p.NodePort}
		if np.NodePort == 0 {
			continue
		}
		if seen[np] {
			return fmt.Errorf("duplicate nodePort: %v", np)
		}
		seen[np] = true
	}
	return nil
}

func needsClusterIP(svc *core.Service) bool { return svc.Spec.Type != core.ServiceTypeExternalName }

func needsNodePort(svc *core.Service) bool {
	switch svc.Spec.Type {
	case core.ServiceTypeNodePort:
		return true
	case core.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func needsHCNodePort(svc *core.Service) bool {
	return svc.Spec.Type == core.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == core.ServiceExternalTrafficPolicyLocal
}

// externallyAccessible is the server's service.ExternallyAccessible.
func externallyAccessible(svc *core.Service) bool {
	return svc.Spec.Type == core.ServiceTypeLoadBalancer || svc.Spec.Type == core.ServiceTypeNodePort ||
		(svc.Spec.Type == core.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

// patchAllocatedValues fills the cluster IPs, node ports (matched by port
// name) and health-check node port that svc leaves out from old.
func patchAllocatedValues(svc, old *core.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		used := map[int32]bool{}
		inNew := map[int32]bool{}
		for _, p := range svc.Spec.Ports {
			inNew[p.NodePort] = p.NodePort != 0
		}
		for _, p := range old.Spec.Ports {
			if p.NodePort != 0 && inNew[p.NodePort] {
				used[p.NodePort] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if v := byName[p.Name]; p.NodePort == 0 && !used[v] {
				p.NodePort = v
			}
		}
	}
	if needsHCNodePort(old) && needsHCNodePort(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}

// normalizeUpdatedClusterIPs keeps clusterIP and clusterIPs in step on
// update, as the storage's normalizeClusterIPs does.
func normalizeUpdatedClusterIPs(svc, old *core.Service) {
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP == svc.Spec.ClusterIP || !slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
		return
	}
	if old.Spec.ClusterIP != "" && svc.Spec.ClusterIP == "" {
		svc.Spec.ClusterIPs = nil
	} else {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// dropTypeDependentFields wipes what a type change makes moot when the
// request did not change it (the service strategy's function of that name).
func dropTypeDependentFields(svc, old *core.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if old.Spec.ClusterIP == svc.Spec.ClusterIP && slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
			svc.Spec.ClusterIP = ""
			svc.Spec.ClusterIPs = nil
		}
		if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if ipFamilyPolicy(old) == ipFamilyPolicy(svc) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	hasNodePorts := func(s *core.Service) bool {
		return s.Spec.Type == core.ServiceTypeNodePort || s.Spec.Type == core.ServiceTypeLoadBalancer
	}
	if hasNodePorts(old) && !hasNodePorts(svc) && sameNodePorts(old, svc) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHCNodePort(old) && !needsHCNodePort(svc) && old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if old.Spec.Type == core.ServiceTypeLoadBalancer && svc.Spec.Type != core.ServiceTypeLoadBalancer {
		a, b := old.Spec.AllocateLoadBalancerNodePorts, svc.Spec.AllocateLoadBalancerNodePorts
		if a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if (old.Spec.LoadBalancerClass == nil) == (svc.Spec.LoadBalancerClass == nil) &&
			(old.Spec.LoadBalancerClass == nil || *old.Spec.LoadBalancerClass == *svc.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && old.Spec.ExternalTrafficPolicy == svc.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
	if svc.Spec.Type != core.ServiceTypeLoadBalancer {
		svc.Status.LoadBalancer = core.LoadBalancerStatus{}
	}
}

func ipFamilyPolicy(svc *core.Service) core.IPFamilyPolicy {
	if svc.Spec.IPFamilyPolicy == nil {
		return ""
	}
	return *svc.Spec.IPFamilyPolicy
}

// sameNodePorts: svc adds no node port old does not have (the strategy's
// sameNodePorts).
func sameNodePorts(old, svc *core.Service) bool {
	had := map[int32]bool{}
	for _, p := range old.Spec.Ports {
		had[p.NodePort] = true
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 && !had[p.NodePort] {
			return false
		}
	}
	return true
}
