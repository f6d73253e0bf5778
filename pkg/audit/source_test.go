package audit

import "testing"

func TestParseCloudSource(t *testing.T) {
	for in, want := range map[string]string{"cloudwatch:/aws/eks/demo/cluster": "/aws/eks/demo/cluster", "cloudwatch:": "", "elasticsearch:http://x/i": "", "/aws/eks/demo/cluster": ""} {
		got, err := ParseCloudSource(in)
		if got != want || (err == nil) != (want != "") {
			t.Errorf("ParseCloudSource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
