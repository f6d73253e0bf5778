package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestChecksAreExplained: every check says what the endpoint must do, who
// breaks, and the one-line fix, and its ID is unique.
func TestChecksAreExplained(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Checks {
		if c.Contract == "" || c.Breaks == "" || c.Fix == "" || seen[c.ID] {
			t.Errorf("%s: contract %q, breaks %q, fix %q, seen before %v", c.ID, c.Contract, c.Breaks, c.Fix, seen[c.ID])
		}
		seen[c.ID] = true
	}
}

// TestFailuresNameTheirItem: a failure about one item of a list names it
// in its values, so that reports can locate it at the object.
func TestFailuresNameTheirItem(t *testing.T) {
	item := func(ns, name, rv string) metav1.PartialObjectMetadata {
		return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	}
	l := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "10"},
		Items: []metav1.PartialObjectMetadata{item("shop", "a", "9"), item("shop", "b", ""), item("", "c", "11")}}
	tests := []struct {
		got  Check
		want map[string]string
	}{
		{judgeItemsHaveRV(l), map[string]string{"items": "3", "missing": "1", "itemNamespace": "shop", "itemName": "b"}},
		{judgeCoversItems(l), map[string]string{"list": "10", "newestItem": "11", "itemName": "c"}},
	}
	for _, tc := range tests {
		if tc.got.Status != Fail {
			t.Errorf("%s: %s, want fail", tc.got.ID, tc.got.Status)
		}
		if diff := cmp.Diff(tc.want, tc.got.Values); diff != "" {
			t.Errorf("%s values (-want +got):\n%s", tc.got.ID, diff)
		}
	}
}
