package conflicts

import "testing"

// TestMatchObjectReadsTypesAsKubectl: --object takes a type as kubectl
// does (short name, singular, kind, .group), matched against the audit
// events' group and plural resource.
func TestMatchObjectReadsTypesAsKubectl(t *testing.T) {
	web := ObjectKey{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web"}
	tests := []struct {
		want ObjectKey
		ok   bool
	}{
		{ObjectKey{Resource: "deploy", Name: "web"}, true},
		{ObjectKey{Resource: "deployment", Namespace: "shop", Name: "web"}, true},
		{ObjectKey{Resource: "deployments.apps", Name: "web"}, true},
		{ObjectKey{Resource: "deployments", Namespace: "other", Name: "web"}, false},
		{ObjectKey{Resource: "ds", Name: "web"}, false},
		{ObjectKey{Resource: "deploy", Name: "api"}, false},
	}
	for _, tt := range tests {
		if got := matchObject(tt.want, web); got != tt.ok {
			t.Errorf("matchObject(%+v, deployments.apps/shop/web) = %v, want %v", tt.want, got, tt.ok)
		}
	}
}
