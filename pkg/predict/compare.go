package predict

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	upstream "k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

var deduced = upstream.NewDeducedTypeConverter()

// typedObject is an object typed once for many (concurrent) comparisons: with the
// kind's schema (tc, else the built-in one), falling back to deduced types
// (lists then count as one field) when the schema does not know the kind
// or the object does not fit it. The deduced value is made on first need.
type typedObject struct {
	raw    *unstructured.Unstructured
	tc     managedfields.TypeConverter
	schema *typed.TypedValue

	dedOnce sync.Once
	ded     *typed.TypedValue
}

func newTypedObject(tc managedfields.TypeConverter, u *unstructured.Unstructured) *typedObject {
	if tc == nil {
		tc = managedfields.DefaultTypeConverter()
	}
	t := &typedObject{raw: u, tc: tc}
	if v, err := tc.ObjectToTyped(u, typed.AllowDuplicates); err == nil {
		t.schema = v
	}
	return t
}

// deduced returns the object typed by deduction, or nil when it cannot be.
func (t *typedObject) deduced() *typed.TypedValue {
	t.dedOnce.Do(func() {
		if v, err := deduced.ObjectToTyped(t.raw, typed.AllowDuplicates); err == nil {
			t.ded = v
		}
	})
	return t.ded
}

// compare returns the comparison with other, or nil when neither the
// schema nor deduction can type both.
func (t *typedObject) compare(other *unstructured.Unstructured) *typed.Comparison {
	if t.schema != nil {
		if o, err := t.tc.ObjectToTyped(other, typed.AllowDuplicates); err == nil {
			if c, err := t.schema.Compare(o); err == nil {
				return c
			}
		}
	}
	ded := t.deduced()
	if ded == nil {
		return nil
	}
	o, err := deduced.ObjectToTyped(other, typed.AllowDuplicates)
	if err != nil {
		return nil
	}
	c, err := ded.Compare(o)
	if err != nil {
		return nil
	}
	return c
}
