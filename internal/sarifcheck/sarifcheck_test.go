package sarifcheck

import (
	"strings"
	"testing"
)

// TestValidate checks that the schema is read and judges: a minimal log
// passes; a log with a wrong version, a result without a message or a
// level SARIF does not know fails.
func TestValidate(t *testing.T) {
	const ok = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"ruleId":"r","level":"error","message":{"text":"m"}}]}]}`
	if err := Validate([]byte(ok)); err != nil {
		t.Fatalf("a minimal log: %v", err)
	}
	bad := map[string]string{
		"version 2.0.0":      strings.Replace(ok, `"2.1.0"`, `"2.0.0"`, 1),
		"result no message":  strings.Replace(ok, `,"message":{"text":"m"}`, "", 1),
		"level fatal":        strings.Replace(ok, `"error"`, `"fatal"`, 1),
		"region startLine 0": strings.Replace(ok, `"message":{"text":"m"}`, `"message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a"},"region":{"startLine":0}}}]`, 1),
		"not JSON":           "{",
	}
	for name, log := range bad {
		if err := Validate([]byte(log)); err == nil {
			t.Errorf("%s: the schema accepted %s", name, log)
		}
	}
}
