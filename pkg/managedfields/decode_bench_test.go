package managedfields

import (
	"bytes"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func deploymentEntries(b *testing.B) []metav1.ManagedFieldsEntry {
	u := loadTestdata(b, "deployment.yaml")
	return u.GetManagedFields()
}

// BenchmarkDecodeEntry is DecodeEntry (validation and FromJSON) over the
// six entries of a real Deployment; BenchmarkFromJSONOnly is the decoder
// alone, for comparison.
func BenchmarkDecodeEntry(b *testing.B) {
	mfs := deploymentEntries(b)
	b.ReportAllocs()
	for b.Loop() {
		for i, mf := range mfs {
			if _, err := DecodeEntry(i, mf); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkFromJSONOnly(b *testing.B) {
	mfs := deploymentEntries(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, mf := range mfs {
			s := fieldpath.NewSet()
			if err := s.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
