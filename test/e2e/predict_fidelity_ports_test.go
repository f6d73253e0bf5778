//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// fidelityPort is a container port the corpus may give a container: the
// same number on TCP and UDP (53 as DNS serves, 8080), a port whose
// protocol is omitted (the server defaults it to TCP) and one on TCP only.
type fidelityPort struct {
	port  int64
	proto string // "" omits it
	name  string
}

var fidelityPorts = []fidelityPort{
	{53, "UDP", "dns"}, {53, "TCP", "dns-tcp"},
	{8080, "TCP", "http"}, {8080, "UDP", "http-udp"},
	{9090, "", "metrics"}, {443, "TCP", "https"},
}

// portKey is a port's key in the server's list map: containerPort and
// protocol, TCP when omitted.
func portKey(p any) string {
	m, _ := p.(map[string]any)
	proto, _ := m["protocol"].(string)
	if proto == "" {
		proto = "TCP"
	}
	return fmt.Sprintf("%v/%s", m["containerPort"], proto)
}

// newPort returns the port p as a manifest writes it: named or not, its
// TCP protocol sometimes omitted.
func newPort(rng *rand.Rand, p fidelityPort) map[string]any {
	m := map[string]any{"containerPort": p.port}
	if p.proto != "" && (p.proto != "TCP" || rng.Intn(3) > 0) {
		m["protocol"] = p.proto
	}
	if rng.Intn(3) > 0 {
		m["name"] = p.name
	}
	return m
}

// seedPorts returns a container's ports, or nil: a random subset of
// fidelityPorts in a random order, or a pair of one number on TCP and UDP.
func seedPorts(rng *rand.Rand) []any {
	switch rng.Intn(4) {
	case 0:
		return nil
	case 1:
		return portPair(rng)
	}
	var ports []any
	for _, i := range rng.Perm(len(fidelityPorts)) {
		if rng.Intn(3) == 0 {
			ports = append(ports, newPort(rng, fidelityPorts[i]))
		}
	}
	return ports
}

// portPair returns 53 or 8080 on TCP and UDP, in either order.
func portPair(rng *rand.Rand) []any {
	i := 2 * rng.Intn(2)
	a, b := newPort(rng, fidelityPorts[i]), newPort(rng, fidelityPorts[i+1])
	if rng.Intn(2) == 0 {
		a, b = b, a
	}
	return []any{a, b}
}

// mutatePorts makes one random edit of one container's ports: a port
// added or removed, the list reordered or replaced by a TCP/UDP pair, a
// TCP protocol omitted or written, a name added, changed or removed.
func mutatePorts(rng *rand.Rand, u *unstructured.Unstructured) {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return
	}
	c := containers[rng.Intn(len(containers))].(map[string]any)
	ports, _ := c["ports"].([]any)
	switch op := rng.Intn(6); {
	case op == 0 || len(ports) == 0:
		have := map[string]bool{}
		for _, p := range ports {
			have[portKey(p)] = true
		}
		p := fidelityPorts[rng.Intn(len(fidelityPorts))]
		if m := newPort(rng, p); !have[portKey(m)] {
			at := rng.Intn(len(ports) + 1)
			ports = append(ports[:at], append([]any{m}, ports[at:]...)...)
		}
	case op == 1:
		k := rng.Intn(len(ports))
		ports = append(ports[:k], ports[k+1:]...)
	case op == 2:
		rng.Shuffle(len(ports), func(a, b int) { ports[a], ports[b] = ports[b], ports[a] })
	case op == 3:
		ports = portPair(rng)
	case op == 4:
		p := ports[rng.Intn(len(ports))].(map[string]any)
		if p["protocol"] == "TCP" {
			delete(p, "protocol")
		} else if p["protocol"] == nil {
			p["protocol"] = "TCP"
		}
	default:
		p := ports[rng.Intn(len(ports))].(map[string]any)
		for _, fp := range fidelityPorts {
			if portKey(p) != portKey(map[string]any{"containerPort": fp.port, "protocol": fp.proto}) {
				continue
			}
			switch p["name"] {
			case nil:
				p["name"] = fp.name
			case fp.name:
				p["name"] = fp.name + "x"
			default:
				delete(p, "name")
			}
			break
		}
	}
	if len(ports) == 0 {
		delete(c, "ports")
	} else {
		c["ports"] = ports
	}
	_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
}

// portsIn says whether u's containers have ports, and whether one has the
// same containerPort on TCP and UDP.
func portsIn(u *unstructured.Unstructured) (has, pair bool) {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		ports, _ := c.(map[string]any)["ports"].([]any)
		seen := map[string]bool{}
		for _, p := range ports {
			has = true
			k := portKey(p)
			seen[k] = true
			port := fmt.Sprint(p.(map[string]any)["containerPort"])
			if seen[port+"/TCP"] && seen[port+"/UDP"] {
				pair = true
			}
		}
	}
	return has, pair
}

// containerPorts returns the containers of u by their name and ports only.
func containerPorts(u *unstructured.Unstructured) []any {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	out := make([]any, 0, len(containers))
	for _, c := range containers {
		cm := c.(map[string]any)
		m := map[string]any{"name": cm["name"]}
		if p, ok := cm["ports"]; ok {
			m["ports"] = p
		}
		out = append(out, m)
	}
	return out
}

// givenPortsPatch returns the spec.template of a strategic merge patch of
// the containers' ports: by hand (the desired ports of each container,
// merged by containerPort), or as kubectl computes one from the live
// ports to the desired ones (with $setElementOrder lists).
func givenPortsPatch(rng *rand.Rand, live, desired *unstructured.Unstructured) map[string]any {
	want := containerPorts(desired)
	if rng.Intn(2) == 0 {
		return map[string]any{"spec": map[string]any{"containers": want}}
	}
	wrap := func(cs []any) []byte {
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}})
		return b
	}
	b, err := strategicpatch.CreateTwoWayMergePatch(wrap(containerPorts(live)), wrap(want), appsv1.Deployment{})
	var patch map[string]any
	if err != nil || json.Unmarshal(b, &patch) != nil {
		return map[string]any{"spec": map[string]any{"containers": want}}
	}
	tpl, _, _ := unstructured.NestedMap(patch, "spec", "template")
	return tpl
}

// givenPortsOps returns JSON patch operations on the containers' ports:
// for a container in the same place live and desired, its ports replaced,
// added or removed, or one desired port appended.
func givenPortsOps(rng *rand.Rand, live, desired *unstructured.Unstructured) []map[string]any {
	containers, _, _ := unstructured.NestedSlice(desired.Object, "spec", "template", "spec", "containers")
	liveContainers, _, _ := unstructured.NestedSlice(live.Object, "spec", "template", "spec", "containers")
	var ops []map[string]any
	for i := range min(len(containers), len(liveContainers)) {
		want, _ := containers[i].(map[string]any)["ports"].([]any)
		have, _ := liveContainers[i].(map[string]any)["ports"].([]any)
		path := fmt.Sprintf("/spec/template/spec/containers/%d/ports", i)
		switch {
		case rng.Intn(2) == 0:
		case want == nil && have != nil:
			ops = append(ops, map[string]any{"op": "remove", "path": path})
		case want != nil && have != nil && rng.Intn(2) == 0:
			ops = append(ops, map[string]any{"op": "add", "path": path + "/-", "value": want[rng.Intn(len(want))]})
		case want != nil:
			ops = append(ops, map[string]any{"op": "add", "path": path, "value": want})
		}
	}
	return ops
}
