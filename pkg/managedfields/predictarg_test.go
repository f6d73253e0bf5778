package managedfields

import "testing"

// TestPredictArg checks that the manager in the suggested predict command
// is one shell word.
func TestPredictArg(t *testing.T) {
	for in, want := range map[string]string{
		"argocd":              "argocd",
		"kubectl-client:v1.2": "kubectl-client:v1.2",
		"my tool":             "'my tool'",
		"it's":                `'it'\''s'`,
		"":                    "''",
	} {
		if got := predictArg(in); got != want {
			t.Errorf("predictArg(%q) = %s, want %s", in, got, want)
		}
	}
}
