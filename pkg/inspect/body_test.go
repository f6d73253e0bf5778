package inspect

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzEncodeBody holds encodeBody to encoding/json (encodeBodyMarshal)
// byte for byte, and members to a split that reads back every top-level
// field of the body as it decodes whole.
func FuzzEncodeBody(f *testing.F) {
	raw, err := os.ReadFile("testdata/deployment.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	for _, s := range []string{
		`{}`,
		`{"metadata":{"name":"a","namespace":"","uid":7,"resourceVersion":"3","managedFields":[]},"data":{"k":"v"}}`,
		`{"a":"<b>&\u2028\u00e9\ud83d\ude00","b":"\"\\\/\b\f\n\r\t\u0001","c":"\xff"}`,
		`{"f":[1.5,1e21,1e20,1e-6,1e-7,-0.0,0.1,123456789012345678901234567890,5e-324,1.7976931348623157e308,-1e-9]}`,
		`{"n":[9007199254740993,-9223372036854775808,9223372036854775807,0,-4]}`,
		`{"x":{"":{"\"":[[],{},[{}],null,true,false]}},"metadata":"not a map"}`,
		`{"metadata":{"labels":{"a,b":"}","c]":"{"}},"status":{"s":"a\"}b"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := map[string]any{}
		if err := utiljson.Unmarshal(data, &m); err != nil || m == nil {
			return
		}
		got, want := encodeBody(m), encodeBodyMarshal(m)
		if !bytes.Equal(got, want) {
			t.Fatalf("encodeBody differs from encoding/json:\n got %s\nwant %s", got, want)
		}
		if got == nil {
			return
		}
		whole := map[string]any{}
		if err := utiljson.Unmarshal(got, &whole); err != nil {
			t.Fatal(err)
		}
		split := map[string]any{}
		var joined []string
		for _, mb := range members(string(got), nil) {
			split[unquoteKey(mb.key)] = decodeValue(mb.value)
			joined = append(joined, mb.key+":"+mb.value)
		}
		if j := "{" + strings.Join(joined, ",") + "}"; j != string(got) {
			t.Fatalf("members do not join back into the body:\n got %s\nwant %s", j, got)
		}
		if diff := cmp.Diff(whole, split); diff != "" {
			t.Fatalf("members read back differently (-whole +split):\n%s", diff)
		}
	})
}
