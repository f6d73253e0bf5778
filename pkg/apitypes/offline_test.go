package apitypes

import "testing"

func TestParseOfflineType(t *testing.T) {
	type req struct{ group, resource string }
	tests := []struct {
		typ      string
		match    []req
		mismatch []req
	}{
		{"deploy", []req{{"apps", "deployments"}}, []req{{"", "deployments"}, {"apps", "daemonsets"}}},
		{"Deployment", []req{{"apps", "deployments"}}, nil},
		{"deployments.apps", []req{{"apps", "deployments"}}, nil},
		{"deployment.v1.apps", []req{{"apps", "deployments"}}, nil},
		{"cm", []req{{"", "configmaps"}}, []req{{"apps", "configmaps"}}},
		{"configmap", []req{{"", "configmaps"}}, nil},
		{"po", []req{{"", "pods"}}, nil},
		{"hpa", []req{{"autoscaling", "horizontalpodautoscalers"}}, nil},
		{"netpol", []req{{"networking.k8s.io", "networkpolicies"}}, nil},
		{"lease", []req{{"coordination.k8s.io", "leases"}}, nil},
		// Two groups serve events: the core group's, as in kubectl.
		{"events", []req{{"", "events"}}, []req{{"events.k8s.io", "events"}}},
		{"events.events.k8s.io", []req{{"events.k8s.io", "events"}}, []req{{"", "events"}}},
		// Custom resources: the plural or the singular, in the group given.
		{"gadgets", []req{{"fidelity.example.com", "gadgets"}}, []req{{"fidelity.example.com", "widgets"}}},
		{"gadget.fidelity.example.com", []req{{"fidelity.example.com", "gadgets"}}, []req{{"other.example.com", "gadgets"}}},
		{"gadgets.v1.fidelity.example.com", []req{{"fidelity.example.com", "gadgets"}}, nil},
		{"policy", []req{{"x.example.com", "policies"}}, nil},
	}
	for _, tt := range tests {
		o := ParseOfflineType(tt.typ)
		for _, r := range tt.match {
			if !o.Matches(r.group, r.resource) {
				t.Errorf("%q should match %s in group %q", tt.typ, r.resource, r.group)
			}
		}
		for _, r := range tt.mismatch {
			if o.Matches(r.group, r.resource) {
				t.Errorf("%q should not match %s in group %q", tt.typ, r.resource, r.group)
			}
		}
	}
}

func FuzzParseOfflineType(f *testing.F) {
	for _, s := range []string{"deploy", "a.b.c", ".", "Gadget.v1.x.io", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := ParseOfflineType(s)
		_ = o.Matches("apps", "deployments")
	})
}

func TestResourceFilter(t *testing.T) {
	tests := []struct {
		patterns []string
		keep     [][2]string
		drop     [][2]string
	}{
		{nil, [][2]string{{"", "configmaps"}}, nil},
		{[]string{"cm"}, [][2]string{{"", "configmaps"}}, [][2]string{{"apps", "deployments"}}},
		{[]string{"*.apps"}, [][2]string{{"apps", "deployments"}}, [][2]string{{"", "configmaps"}}},
		{[]string{"*.*", "-tokenreviews.*", "-leases.coordination.k8s.io"}, [][2]string{{"", "configmaps"}, {"apps", "deployments"}},
			[][2]string{{"authentication.k8s.io", "tokenreviews"}, {"coordination.k8s.io", "leases"}}},
		{[]string{"-events"}, [][2]string{{"events.k8s.io", "events"}, {"", "pods"}}, [][2]string{{"", "events"}}},
		{[]string{"*."}, [][2]string{{"", "secrets"}}, [][2]string{{"apps", "deployments"}}},
	}
	for _, tt := range tests {
		f, err := ParseResourceFilter(tt.patterns)
		if err != nil {
			t.Fatalf("%q: %v", tt.patterns, err)
		}
		for _, k := range tt.keep {
			if !f.Keeps(k[0], k[1]) {
				t.Errorf("%q should keep %s in %q", tt.patterns, k[1], k[0])
			}
		}
		for _, k := range tt.drop {
			if f.Keeps(k[0], k[1]) {
				t.Errorf("%q should drop %s in %q", tt.patterns, k[1], k[0])
			}
		}
	}
	for _, bad := range []string{"-", "[a", ""} {
		if _, err := ParseResourceFilter([]string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestBuiltinNamespaced(t *testing.T) {
	for _, tc := range []struct {
		group, kind        string
		namespaced, wantOK bool
	}{
		{"", "ConfigMap", true, true},
		{"apps", "Deployment", true, true},
		{"", "Namespace", false, true},
		{"rbac.authorization.k8s.io", "ClusterRole", false, true},
		{"apps", "ConfigMap", false, false},
		{"example.com", "Gadget", false, false},
	} {
		ns, ok := BuiltinNamespaced(tc.group, tc.kind)
		if ns != tc.namespaced || ok != tc.wantOK {
			t.Errorf("BuiltinNamespaced(%q, %q) = %v, %v; want %v, %v", tc.group, tc.kind, ns, ok, tc.namespaced, tc.wantOK)
		}
	}
}
