package managedfields

import (
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// FuzzReadElement checks readElement's fast path against fieldpath's own
// reader: the same elements, written the same, and the same keys refused.
func FuzzReadElement(f *testing.F) {
	for _, k := range []string{
		`k:{"name":"nginx"}`, `k:{"name":""}`, `k:{"":"x"}`, `k:{"name":"a\"b"}`, `k:{"name":"a\\b"}`,
		`k:{"name":"é"}`, `k:{"a":"b","c":"d"}`, `k:{"port":80}`, `k:{ "name" : "x" }`, `k:{"name":"x"`,
		`k:{"name":"x"}}`, `k:{"name":"x":"y"}`, `f:spec`, `v:"a"`, `i:3`, `k:{"`, `k:{"a":"`,
		`k:{"name":"tab\t\u00e9\u2028"}`, `k:{"name":null}`, `k:{"name":true}`, `k:{"name":{"a":1}}`, `k:{"name":1.5}`,
	} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		got, err := readElement(k)
		want, werr := fieldpath.DeserializePathElement(k)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: readElement error %v, DeserializePathElement error %v", k, err, werr)
		}
		if err != nil {
			return
		}
		if !got.Equals(want) || got.String() != want.String() || elementKey(got) != elementKey(want) {
			t.Fatalf("%q: readElement read %s, DeserializePathElement %s", k, got, want)
		}
		if s := string(AppendElementString([]byte("x"), want)); s != "x"+want.String() {
			t.Fatalf("%q: AppendElementString wrote %q, String %q", k, s[1:], want.String())
		}
	})
}
