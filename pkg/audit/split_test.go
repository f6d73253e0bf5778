package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestSplitKeepsEveryLineAndLineNumbers(t *testing.T) {
	defer func(v int64) { minSplit = v }(minSplit)
	minSplit = 0
	lines := strings.Repeat(ok409+"\n", 99) + `{"kind":"Pod","apiVersion":"v1"}` + "\n"
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	srcs, err := Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := Split(srcs[0], 3)
	if err != nil || len(parts) != 3 {
		t.Fatalf("got %d parts, %v; want 3", len(parts), err)
	}
	var events atomic.Int64
	var errs []string
	for _, part := range parts {
		_, err := Decode(context.Background(), part, Options{}, func(*Event) error { events.Add(1); return nil })
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if events.Load() != 99 {
		t.Errorf("decoded %d events, want 99", events.Load())
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "audit.log:100: not an audit event") {
		t.Errorf("errors %q, want one naming audit.log:100", errs)
	}
}
