package audit

import "testing"

func TestManagerFromUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"kubectl/v1.36.3 (linux/amd64) kubernetes/abc": "kubectl",
		"no-slash":                       "no-slash",
		"":                               "",
		"tab\there/v1":                   "tabhere",
		"héllo/v1":                       "héllo",
		string(make([]byte, 200)) + "/x": "",
	} {
		if got := managerFromUserAgent(ua); got != want {
			t.Errorf("managerFromUserAgent(%q) = %q, want %q", ua, got, want)
		}
	}
	long := ""
	for range 130 {
		long += "a"
	}
	if got := managerFromUserAgent(long + "/v1"); got != long[:128] {
		t.Errorf("a 130-byte prefix gives %d bytes, want 128", len(got))
	}
}
