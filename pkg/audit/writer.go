package audit

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Writer identifies a writer as the API server sees it: its user, its
// field manager, and the pod its token is bound to. The field manager is
// the request's ?fieldManager=, or else the one the API server derives
// from the user agent (its part before the first "/", as managedFields
// record it): kube-controller-manager's controllers, kubectl scale and
// most client-go programs send none.
type Writer struct {
	User         string `json:"user"`
	FieldManager string `json:"fieldManager,omitempty"`
	Pod          string `json:"pod,omitempty"`
}

// String is user[/fieldManager][@pod].
func (w Writer) String() string {
	s := w.User
	if w.FieldManager != "" {
		s += "/" + w.FieldManager
	}
	if w.Pod != "" {
		s += "@" + w.Pod
	}
	return s
}

// WriterOf is the writer of the write e: its user, its field manager
// (FieldManager) and its pod. kubectl rv conflicts and leases name
// writers by it, alike.
func WriterOf(e *Event) Writer {
	return Writer{User: e.Username, FieldManager: FieldManager(e), Pod: e.PodName}
}

// DryRun says whether the write e was a dry run, which persists nothing.
// The API server accepts only dryRun=All, and audits it like a write.
func DryRun(e *Event) bool { return QueryParam(e.RequestURI, "dryRun") != "" }

// FieldManager is the field manager of the write e as the API server
// records it: ?fieldManager=, or else its user agent's prefix.
func FieldManager(e *Event) string {
	if fm := QueryParam(e.RequestURI, "fieldManager"); fm != "" {
		return fm
	}
	return managerFromUserAgent(e.UserAgent)
}

// managerFromUserAgent is the field manager the API server records for a
// write without ?fieldManager= (k8s.io/apiserver's prefixFromUserAgent):
// the user agent up to its first "/", without unprintable characters, at
// most 128 bytes. The usual user agent (printable ASCII, short) is
// returned as a substring, without allocating.
func managerFromUserAgent(ua string) string {
	m, _, _ := strings.Cut(ua, "/")
	plain := len(m) <= fieldManagerMaxLength
	for i := 0; plain && i < len(m); i++ {
		plain = m[i] >= 0x20 && m[i] < 0x7f
	}
	if plain {
		return m
	}
	var b strings.Builder
	for _, r := range m {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > fieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fieldManagerMaxLength is metav1 validation's FieldManagerMaxLength.
const fieldManagerMaxLength = 128

// QueryParam reads the parameter key from a request URI's query, as
// url.ParseQuery(query).Get(key) does, or "" when the query does not
// parse. Queries without escapes are read without allocating, and a URI
// without key in its query is not parsed at all.
func QueryParam(uri, key string) string {
	i := strings.IndexByte(uri, '?')
	if i < 0 || !strings.Contains(uri[i:], key) {
		return ""
	}
	query := uri[i+1:]
	if strings.ContainsAny(query, "%+;") {
		q, err := url.ParseQuery(query)
		if err != nil {
			return ""
		}
		return q.Get(key)
	}
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		if k, v, _ := strings.Cut(kv, "="); k == key {
			return v
		}
	}
	return ""
}
