package predict

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	upstream "k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

var deduced = upstream.NewDeducedTypeConverter()

// compareTyped compares two objects field by field with the kind's schema
// (tc, else the built-in one), falling back to deduced types (lists then
// count as one field) when the schema does not know the kind or the
// objects do not fit it. It returns nil when neither works.
func compareTyped(tc managedfields.TypeConverter, before, after *unstructured.Unstructured) *typed.Comparison {
	if tc == nil {
		tc = managedfields.BuiltinTypeConverter()
	}
	if c := compareWith(tc, before, after); c != nil {
		return c
	}
	return compareWith(deduced, before, after)
}

func compareWith(tc managedfields.TypeConverter, before, after *unstructured.Unstructured) *typed.Comparison {
	b, err := tc.ObjectToTyped(before, typed.AllowDuplicates)
	if err != nil {
		return nil
	}
	a, err := tc.ObjectToTyped(after, typed.AllowDuplicates)
	if err != nil {
		return nil
	}
	c, err := b.Compare(a)
	if err != nil {
		return nil
	}
	return c
}
