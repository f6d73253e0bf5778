package jsonvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzAppendValue holds AppendValue to encoding/json.Marshal on every value
// JSON decodes into (with int64 for integers, as unstructured objects hold
// them).
func FuzzAppendValue(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `"<&>"`, `{"b":1,"a":[true,false,null]}`,
		`{"f":[1.5,1e21,1e20,1e-6,1e-7,-0.0,0.1,123456789012345678901234567890,5e-324,1.7976931348623157e308,-1e-9]}`,
		`{"n":[9007199254740993,-9223372036854775808,9223372036854775807,0,-4]}`,
		`{"a":"\u2028\u00e9\ud83d\ude00","b":"\"\\\/\b\f\n\r\t\u0001","c":"\xff"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if err := utiljson.Unmarshal(data, &v); err != nil {
			return
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendValue(nil, v)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("AppendValue(%s) = %s, %v; encoding/json writes %s", data, got, ok, want)
		}
	})
}

func TestAppendValueRefusesWhatJSONRefuses(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), []any{math.Inf(-1)}, map[string]any{"x": struct{}{}}} {
		if _, ok := AppendValue(nil, v); ok {
			t.Errorf("AppendValue(%v) = ok, want refused", v)
		}
	}
	got, ok := AppendObject(nil, map[string]any{"a": 1, "b": int32(2), "c": "x"}, func(k string, _ any) bool { return k == "b" })
	if !ok || string(got) != `{"a":1,"c":"x"}` {
		t.Errorf("AppendObject with skip = %s, %v", got, ok)
	}
}
