package main

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScan(t *testing.T) {
	got, err := Scan([]string{filepath.Join("testdata", "src")})
	if err != nil {
		t.Fatal(err)
	}
	want := []Func{
		{Pos: filepath.Join("testdata", "src", "a.go") + ":7", Name: "(*T).method", Lines: 6},
		{Pos: filepath.Join("testdata", "src", "a.go") + ":3", Name: "short", Lines: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
}
