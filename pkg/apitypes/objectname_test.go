package apitypes

import (
	"strings"
	"testing"
)

func TestParseObjectName(t *testing.T) {
	for in, want := range map[string]ObjectName{
		"cm/settings":                   {Type: "cm", Name: "settings"},
		"cm/shop/settings":              {Type: "cm", Namespace: "shop", Name: "settings"},
		"leases.coordination.k8s.io/kc": {Type: "leases.coordination.k8s.io", Name: "kc"},
	} {
		got, err := ParseObjectName(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseObjectName(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "cm", "cm/", "/x", "cm//x", "a/b/c/d"} {
		if _, err := ParseObjectName(in); err == nil || !strings.Contains(err.Error(), "is not TYPE/NAME or TYPE/NAMESPACE/NAME") {
			t.Errorf("ParseObjectName(%q): error %v, want one saying what is wanted", in, err)
		}
	}
}

func TestObjectNameInNamespace(t *testing.T) {
	o := ObjectName{Type: "cm", Name: "a"}
	if got, _ := o.InNamespace("shop"); got.Namespace != "shop" {
		t.Errorf("-n shop: namespace %q", got.Namespace)
	}
	o.Namespace = "shop"
	if got, err := o.InNamespace(""); err != nil || got.Namespace != "shop" {
		t.Errorf("no -n: %+v, %v", got, err)
	}
	if _, err := o.InNamespace("other"); err == nil || !strings.Contains(err.Error(), `names namespace "shop", -n names "other"`) {
		t.Errorf("-n other: error %v", err)
	}
}

func FuzzParseObjectName(f *testing.F) {
	for _, s := range []string{"cm/a", "cm/ns/a", "a//b", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseObjectName(s)
		if err != nil {
			return
		}
		if o.String() != s || o.Type == "" || o.Name == "" {
			t.Errorf("%q parsed to %+v", s, o)
		}
	})
}
