package ownersprint

import (
	"bytes"
	"math"
	"testing"

	"sigs.k8s.io/yaml"
)

// fuzzTree builds a JSON-shaped tree from the fuzzer's bytes: each byte
// picks a kind, and strings (keys too) and numbers take their bytes raw, so
// that invalid UTF-8, control characters and odd floats are reached.
type fuzzTree struct {
	b []byte
}

func (f *fuzzTree) next() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzTree) str() string {
	n := int(f.next() % 12)
	n = min(n, len(f.b))
	s := string(f.b[:n])
	f.b = f.b[n:]
	return s
}

func (f *fuzzTree) bits() uint64 {
	var u uint64
	for range 8 {
		u = u<<8 | uint64(f.next())
	}
	return u
}

func (f *fuzzTree) value(depth int) any {
	switch c := f.next(); c % 9 {
	case 0:
		return nil
	case 1:
		return c%2 == 0
	case 2:
		return int64(f.bits())
	case 3:
		return math.Float64frombits(f.bits())
	case 4:
		return float64(int64(f.bits()) >> (f.next() % 64))
	case 5, 6:
		if depth > 0 {
			m := map[string]any{}
			for range f.next() % 5 {
				m[f.str()] = f.value(depth - 1)
			}
			return m
		}
	case 7:
		if depth > 0 {
			var l []any
			for range f.next() % 5 {
				l = append(l, f.value(depth-1))
			}
			return l
		}
	}
	return f.str()
}

// FuzzKubectlYAML holds kubectlYAML equal to sigs.k8s.io/yaml.Marshal, the
// marshaller kubectl prints with: the same bytes, or both an error.
func FuzzKubectlYAML(f *testing.F) {
	f.Add([]byte("\x05\x03\x01a\x08\x01b\x02\x00\x00\x00\x00\x00\x00\x00\x07"))
	f.Add([]byte("\x05\x04\x02k\xff\x08\x03\xc2\x85x\x03\x7f\xef\xbb\xbf\x03\x41\x2e\x84\x80\x00\x00\x00\x00"))
	f.Add([]byte("\x05\x04\x03\xef\xbf\xbd\x04\x00\x00\x00\x00\x00\x0f\x42\x40\x00\x01z\x03\x7f\xf8\x00\x00\x00\x00\x00\x01"))
	f.Add([]byte("\x06\x03\x03a.b\x07\x02\x08\x02-1\x08\x03yes\x01n\x08\x03\x22x\x22"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ft := &fuzzTree{b: data}
		obj := map[string]any{}
		for len(ft.b) > 0 {
			obj[ft.str()] = ft.value(3)
		}
		want, wantErr := yaml.Marshal(obj)
		if !deterministic(obj, want) {
			// yaml.v2 sorts keys with a comparison that is not transitive
			// (1X0 < 2 < 120X10 < 1X0): its order then depends on the
			// map's, and the library has no single answer to compare with.
			return
		}
		got, err := kubectlYAML(obj)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, the library's %v", err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("kubectlYAML:\n%s\nsigs.k8s.io/yaml:\n%s", got, want)
		}
	})
}

// deterministic reports whether sigs.k8s.io/yaml.Marshal(obj) gives want
// on 20 more calls (a map of n keys has up to n! orders).
func deterministic(obj map[string]any, want []byte) bool {
	for range 20 {
		if again, _ := yaml.Marshal(obj); !bytes.Equal(again, want) {
			return false
		}
	}
	return true
}

// TestKubectlYAMLSkipsTheRoundTrip: the ordinary objects of the fixtures
// take the direct path, so the speed-up is real.
func TestKubectlYAMLSkipsTheRoundTrip(t *testing.T) {
	u := bigObject(t, 10, 3)
	if _, ok := asYAMLValue(u.Object); !ok {
		t.Fatal("asYAMLValue refused an ordinary object: kubectlYAML would take the library's round trip")
	}
	for _, v := range []any{"\xff", "a\u0085", int(1), math.NaN(), map[string]any{"\x80": 1}} {
		if _, ok := asYAMLValue(v); ok {
			t.Errorf("asYAMLValue(%q) took the direct path; the round trip changes it", v)
		}
	}
}
