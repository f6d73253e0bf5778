package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	ok409   = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/default/configmaps/c1?fieldManager=w1","verb":"update","user":{"username":"system:serviceaccount:ns:sa","extra":{"authentication.kubernetes.io/pod-name":["pod-1"]}},"userAgent":"ctrl/v1","objectRef":{"resource":"configmaps","namespace":"default","name":"c1","apiVersion":"v1","resourceVersion":"208"},"responseStatus":{"status":"Failure","message":"the object has been modified","reason":"Conflict","details":{"name":"c1","kind":"configmaps"},"code":409},"requestReceivedTimestamp":"2026-11-24T14:21:55.447778Z","stageTimestamp":"2026-11-24T14:21:55.450564Z"}`
	okRR    = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"a2","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/x/configmaps/c2","verb":"update","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"x","name":"c2","resourceVersion":"5"},"responseStatus":{"code":200},"requestObject":{"data":{"password":"hunter2"}},"responseObject":{"metadata":{"resourceVersion":"6"},"data":{"password":"hunter2"}},"requestReceivedTimestamp":"2026-11-24T14:21:56Z","stageTimestamp":"2026-11-24T14:21:56.1Z"}`
	started = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"a3","stage":"ResponseStarted","verb":"watch"}`
)

func decodeString(t *testing.T, in string, opts Options) ([]Event, Stats, error) {
	t.Helper()
	var got []Event
	st, err := Decode(context.Background(), NewSource("audit.log", strings.NewReader(in)), opts, func(e *Event) error {
		got = append(got, *e)
		return nil
	})
	return got, st, err
}

func TestDecodeFields(t *testing.T) {
	got, st, err := decodeString(t, ok409+"\n"+started+"\n"+okRR+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Stats{Lines: 3, Events: 2, OtherStages: 1}, st); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	e := got[0]
	if e.Code != 409 || e.PodName != "pod-1" || e.ObjectRef.ResourceVersion != "208" || e.DetailsKind != "configmaps" || e.UserAgent != "ctrl/v1" {
		t.Errorf("event 0 = %+v", e)
	}
	if got[1].ResponseRV != "6" {
		t.Errorf("ResponseRV = %q, want 6", got[1].ResponseRV)
	}
	if s := got[1].RequestURI + got[1].Message; strings.Contains(s, "hunter2") {
		t.Errorf("a body leaked into the event: %+v", got[1])
	}
}

// TestDecodeHostPrefixedLines: oc adm node-logs --role=master --path=
// kube-apiserver/audit.log prints each event after the replica's host
// name; the events are the same as the plain log's, with the host kept.
func TestDecodeHostPrefixedLines(t *testing.T) {
	plain, _, err := decodeString(t, ok409+"\n"+ok409+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := decodeString(t, "master-0 "+ok409+"\nip-10-0-1-2.ec2.internal "+ok409+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Host != "master-0" || got[1].Host != "ip-10-0-1-2.ec2.internal" {
		t.Fatalf("hosts of %d events: %+v", len(got), got)
	}
	for i := range got {
		got[i].Host = ""
		got[i].idHash, plain[i].idHash = 0, 0
		if got[i] != plain[i] {
			t.Errorf("event %d: %+v, plain %+v", i, got[i], plain[i])
		}
	}
}

func TestDecodeImpersonated(t *testing.T) {
	line := strings.Replace(ok409, `"userAgent"`, `"impersonatedUser":{"username":"system:serviceaccount:x:y","extra":{"authentication.kubernetes.io/pod-name":["pod-9"]}},"userAgent"`, 1)
	got, _, err := decodeString(t, line, Options{})
	if err != nil || got[0].Username != "system:serviceaccount:x:y" || got[0].PodName != "pod-9" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestDecodeBadInput(t *testing.T) {
	long := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","requestURI":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	tests := []struct {
		name, in string
		opts     Options
		want     string // substring of the error; "" for no error
		trunc    int
	}{
		{name: "non-audit JSON", in: ok409 + "\n" + `{"kind":"Pod","apiVersion":"v1"}` + "\n", want: "audit.log:2: not an audit event"},
		{name: "v1beta1", in: strings.Replace(ok409, "audit.k8s.io/v1", "audit.k8s.io/v1beta1", 1) + "\n", want: "audit.log:1: audit.k8s.io/v1beta1 is not supported"},
		{name: "not JSON", in: ok409 + "\nhello\n", want: "audit.log:2: not JSON"},
		{name: "line over 1 MB", in: ok409 + "\n" + long + "\n", want: "audit.log:2: line longer than"},
		{name: "last line over 1 MB", in: ok409 + "\n" + long, want: "audit.log:2: line longer than"},
		{name: "truncated last line tolerated", in: ok409 + "\n" + ok409[:100], trunc: 1},
		{name: "truncated last line strict", in: ok409 + "\n" + ok409[:100], opts: Options{Strict: true}, want: "audit.log:2: the last line is cut short"},
		{name: "blank line strict", in: ok409 + "\n\n", opts: Options{Strict: true}, want: "audit.log:2: blank line"},
		{name: "complete last line without newline", in: ok409},
		{name: "a host prefix before something else", in: "master-0 " + ok409 + "\nmaster-1 hello\n", want: "audit.log:2: not JSON"},
		{name: "a host prefix alone", in: "master-0 {\n", want: "audit.log:1: not JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, st, err := decodeString(t, tc.in, tc.opts)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadInput)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if st.Truncated != tc.trunc {
				t.Errorf("Truncated = %d, want %d", st.Truncated, tc.trunc)
			}
		})
	}
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDecodeGzip(t *testing.T) {
	z := gz(t, strings.Repeat(ok409+"\n", 50))
	got, _, err := decodeString(t, string(z), Options{})
	if err != nil || len(got) != 50 {
		t.Fatalf("got %d events, err %v; want 50", len(got), err)
	}
	_, _, err = decodeString(t, string(z[:len(z)/2]), Options{})
	if err == nil || !strings.Contains(err.Error(), "gzip stream is cut short") {
		t.Fatalf("cut gzip: err %v", err)
	}
}

func TestOpenDirectoryOrdersRotatedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"audit.log", "audit-2026-11-24T14-00-00.000.log", "audit-2026-11-24T13-00-00.000.log.gz"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srcs, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range srcs {
		names = append(names, filepath.Base(s.Name))
	}
	want := []string{"audit-2026-11-24T13-00-00.000.log.gz", "audit-2026-11-24T14-00-00.000.log", "audit.log"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if _, err := Open(filepath.Join(dir, "nope"), nil); err == nil || !strings.Contains(err.Error(), "--audit-log") {
		t.Errorf("missing file: %v", err)
	}
}

func TestDecodeRealEvent(t *testing.T) {
	b, err := os.ReadFile("testdata/update-409.json")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := decodeString(t, string(b), Options{})
	if err != nil || len(got) != 1 || got[0].Code != 409 || got[0].ObjectRef.Name == "" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// FuzzDecode holds the decoder to: no panic, and every error names the
// source and wraps ErrBadInput.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(ok409 + "\n" + okRR + "\n"))
	f.Add([]byte(started + "\n" + ok409[:50]))
	f.Add([]byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1beta1"}`))
	f.Add([]byte("\n\n{}\n"))
	f.Add(gz(&testing.T{}, ok409+"\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, strict := range []bool{false, true} {
			_, err := Decode(context.Background(), NewSource("f", bytes.NewReader(in)), Options{Strict: strict}, func(*Event) error { return nil })
			if err != nil && (!errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "f")) {
				t.Fatalf("error %v does not wrap ErrBadInput", err)
			}
		}
	})
}
