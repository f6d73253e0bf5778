package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// awsFilterLogEvents is aws logs filter-log-events --output json over the
// given audit events, as the AWS CLI prints a FilterLogEvents response
// (events with logStreamName, timestamp, message, ingestionTime, eventId;
// searchedLogStreams; nextToken), indented as the CLI indents it.
func awsFilterLogEvents(t *testing.T, lines []string) string {
	t.Helper()
	type event struct {
		LogStreamName string `json:"logStreamName"`
		Timestamp     int64  `json:"timestamp"`
		Message       string `json:"message"`
		IngestionTime int64  `json:"ingestionTime"`
		EventID       string `json:"eventId"`
	}
	out := struct {
		Events             []event `json:"events"`
		SearchedLogStreams []struct {
			LogStreamName      string `json:"logStreamName"`
			SearchedCompletely bool   `json:"searchedCompletely"`
		} `json:"searchedLogStreams"`
		NextToken string `json:"nextToken"`
	}{}
	for i, l := range lines {
		out.Events = append(out.Events, event{"kube-apiserver-audit-0123456789abcdef", 1764237600000 + int64(i), l, 1764237601000 + int64(i), fmt.Sprintf("3894%030d", i)})
	}
	b, err := json.MarshalIndent(out, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// awsQueryResults is aws logs get-query-results over the events, for a
// Logs Insights query "fields @timestamp, @message".
func awsQueryResults(t *testing.T, lines []string) string {
	t.Helper()
	type field struct {
		Field string `json:"field"`
		Value string `json:"value"`
	}
	var results [][]field
	for i, l := range lines {
		results = append(results, []field{{"@timestamp", fmt.Sprintf("2026-11-27 10:00:00.%03d", i)}, {"@message", l}, {"@ptr", "CmAKJwoj"}})
	}
	b, err := json.MarshalIndent(map[string]any{"results": results, "statistics": map[string]float64{"recordsMatched": float64(len(lines)), "recordsScanned": 1e3, "bytesScanned": 1e5}, "status": "Complete"}, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeAWSExports: both AWS CLI outputs give the events of the plain
// log, 409s kept as 409s.
func TestDecodeAWSExports(t *testing.T) {
	var lines []string
	for i := range 50 {
		lines = append(lines, eventLine(i))
	}
	want, _, err := decodeString(t, strings.Join(lines, "\n")+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{"filter-log-events": awsFilterLogEvents(t, lines), "get-query-results": awsQueryResults(t, lines)} {
		got, _, err := decodeString(t, in, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
			t.Errorf("%s: events (-plain log +export):\n%s", name, diff)
		}
		if got[0].Code != 409 {
			t.Errorf("%s: code %d, want the 409", name, got[0].Code)
		}
	}
}

func TestDecodeAWSExportBadInput(t *testing.T) {
	lines := []string{eventLine(0), eventLine(1)}
	good := awsFilterLogEvents(t, lines)
	tests := []struct{ name, in, want string }{
		{"cut short", good[:len(good)/2], "audit.log:"},
		{"cut short says so", good[:len(good)/2], "aws logs filter-log-events output: "},
		{"an event without message", strings.Replace(good, `"message"`, `"msg"`, 1), "an event has no message"},
		{"a message that is not JSON", strings.Replace(good, `"message": "{`, `"message": "x{`, 1), "audit.log:6: not JSON"},
		{"a message that is another object", strings.Replace(good, `\"kind\":\"Event\"`, `\"kind\":\"Pod\"`, 1), "not an audit event"},
		{"query row without @message", strings.Replace(awsQueryResults(t, lines), `"@message"`, `"@msg"`, 1), "has no @message field"},
	}
	for _, tc := range tests {
		_, _, err := decodeString(t, tc.in, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

func FuzzExportReader(f *testing.F) {
	f.Add(`{"events":[{"message":"{}"}]}`)
	f.Add(`{"results":[[{"field":"@message","value":"{\"kind\":\"Event\"}"}]],"status":"Complete"}`)
	f.Add(`{"events":[`)
	f.Fuzz(func(t *testing.T, in string) {
		_, _, _ = decodeString(t, in, Options{})
	})
}
