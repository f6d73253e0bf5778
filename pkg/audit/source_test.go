package audit

import "testing"

func TestParseCloudSource(t *testing.T) {
	for in, want := range map[string]string{"cloudwatch:/aws/eks/demo/cluster": "cloudwatch: /aws/eks/demo/cluster", "elasticsearch:http://x:9200/i": "elasticsearch: http://x:9200/i", "cloudwatch:": "", "s3://b": "", "/aws/eks/demo/cluster": ""} {
		scheme, target, err := ParseCloudSource(in)
		if got := scheme + " " + target; (err == nil) != (want != "") || err == nil && got != want {
			t.Errorf("ParseCloudSource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestRedactUserinfo(t *testing.T) {
	for in, want := range map[string]string{"https://u:p@h:9200/i": "https://xxxxx@h:9200/i", "elasticsearch:http://a@b@h/i": "elasticsearch:http://xxxxx@h/i", "cloudwatch:/aws/eks/x": "cloudwatch:/aws/eks/x", "u:p@h/i": "xxxxx@h/i",
		"clickhouse:clickhouse://h:9000/db/t?username=u&password=s3cret&secure": "clickhouse:clickhouse://h:9000/db/t?username=u&password=xxxxx&secure",
		"clickhouse:http://h/t?PASSWORD=a&password=b#c":                         "clickhouse:http://h/t?PASSWORD=xxxxx&password=xxxxx#c"} {
		if got := RedactUserinfo(in); got != want {
			t.Errorf("RedactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
