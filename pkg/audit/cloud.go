package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The exports that are JSON arrays of entries whose fields are not the
// audit event's own: each entry is turned into an audit.k8s.io/v1 event
// (cloudLine) and read as the plain log is.
const (
	// exportGcloud is what gcloud logging read --format=json prints: a
	// JSON array of Cloud Logging LogEntry, the GKE API server's requests
	// being those whose protoPayload is Google's AuditLog with serviceName
	// k8s.io.
	exportGcloud = "gcloud logging read"
	// exportAz is what az monitor log-analytics query prints for the
	// AKSAudit and AKSAuditAdmin tables: a JSON array of rows, one object
	// each, whose members are the table's columns (and TableName), every
	// value a string (the CLI prints str(value); dynamic columns are JSON
	// text).
	exportAz = "az monitor log-analytics query"
)

// arrayKind names the export a JSON array is, from the first keys of its
// first entry, or "" when they are not known. An empty array is an
// export of nothing (gcloud's words, as either CLI prints it).
func arrayKind(dec *json.Decoder) string {
	t, err := dec.Token()
	if err != nil {
		return ""
	}
	if t == json.Delim(']') {
		return exportGcloud
	}
	if t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return ""
		}
		switch key {
		case "protoPayload", "logName", "insertId", "receiveTimestamp":
			return exportGcloud
		case "TableName", "AuditId", "RequestUri", "StageReceivedTime":
			return exportAz
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// lineEvent is the audit.k8s.io/v1 Event a cloud entry is turned into:
// the fields wireEvent reads, nothing else.
type lineEvent struct {
	Kind                     string      `json:"kind"`
	APIVersion               string      `json:"apiVersion"`
	Level                    string      `json:"level,omitempty"`
	AuditID                  string      `json:"auditID"`
	Stage                    string      `json:"stage"`
	RequestURI               string      `json:"requestURI"`
	Verb                     string      `json:"verb"`
	User                     wireUser    `json:"user"`
	UserAgent                string      `json:"userAgent,omitempty"`
	ObjectRef                *ObjectRef  `json:"objectRef,omitempty"`
	ResponseStatus           wireStatus  `json:"responseStatus"`
	ResponseObject           *wireObject `json:"responseObject,omitempty"`
	RequestReceivedTimestamp time.Time   `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time   `json:"stageTimestamp"`
}

func newLineEvent() *lineEvent {
	return &lineEvent{Kind: "Event", APIVersion: "audit.k8s.io/v1"}
}

func (l *lineEvent) setResponseRV(rv string) {
	if rv != "" {
		l.ResponseObject = &wireObject{}
		l.ResponseObject.Metadata.ResourceVersion = rv
	}
}

// text is the event's line; host, when set, prefixes it as the replica
// that logged it (cutHost), if it is one word.
func (l *lineEvent) text(host string) (string, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	if host != "" && !strings.ContainsAny(host, " \t\r\n{}\"") {
		return host + " " + string(b), nil
	}
	return string(b), nil
}

// errNotKubernetes is an entry of a Cloud Logging export that is not a
// Kubernetes API request (another service's audit log): it is skipped.
var errNotKubernetes = errors.New("not a Kubernetes API request")

// gkeEntry is the part of a Cloud Logging LogEntry read: the GKE API
// server's audit entries carry Google's AuditLog in protoPayload.
type gkeEntry struct {
	InsertID     string     `json:"insertId"`
	Timestamp    *time.Time `json:"timestamp"`
	ProtoPayload *struct {
		ServiceName        string `json:"serviceName"`
		MethodName         string `json:"methodName"`
		ResourceName       string `json:"resourceName"`
		AuthenticationInfo struct {
			PrincipalEmail string `json:"principalEmail"`
		} `json:"authenticationInfo"`
		RequestMetadata struct {
			CallerSuppliedUserAgent string `json:"callerSuppliedUserAgent"`
		} `json:"requestMetadata"`
		// Status is a google.rpc.Status.
		Status struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		Request  *gkeBody `json:"request"`
		Response *gkeBody `json:"response"`
	} `json:"protoPayload"`
}

// gkeBody is what is read of a request or response body (a Kubernetes
// object, or a Status for a refused request); the rest is skipped.
type gkeBody struct {
	Kind string `json:"kind"`
	wireStatus
	wireObject
}

// rpcHTTP is the HTTP status of each google.rpc.Code, as google/rpc/code.proto
// documents it ("HTTP Mapping"). ABORTED (a concurrency conflict) and
// ALREADY_EXISTS are both 409.
var rpcHTTP = [...]int{0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}

// The google.rpc.Codes that are a Kubernetes 409, with the reason the API
// server gives each.
const (
	rpcAlreadyExists = 6
	rpcAborted       = 10
)

// gkeLine turns one LogEntry into an audit event's line.
func gkeLine(raw []byte) (string, error) {
	var g gkeEntry
	if err := json.Unmarshal(raw, &g); err != nil {
		return "", fmt.Errorf("an entry is not a LogEntry: %v", err)
	}
	p := g.ProtoPayload
	if p == nil || p.ServiceName != "k8s.io" {
		return "", errNotKubernetes
	}
	if g.Timestamp == nil {
		return "", errors.New("an entry has no timestamp")
	}
	if g.InsertID == "" {
		return "", errors.New("an entry has no insertId")
	}
	l := newLineEvent()
	l.AuditID, l.Stage, l.Verb = g.InsertID, StageResponseComplete, gkeVerb(p.MethodName)
	l.User.Username, l.UserAgent = p.AuthenticationInfo.PrincipalEmail, p.RequestMetadata.CallerSuppliedUserAgent
	l.ObjectRef = gkeObjectRef(p.ResourceName, p.MethodName)
	l.RequestReceivedTimestamp, l.StageTimestamp = *g.Timestamp, *g.Timestamp
	st := &l.ResponseStatus
	switch r := p.Response; {
	case r != nil && r.Kind == "Status" && r.Code != 0:
		// The API server's own answer, when the entry carries it.
		*st = r.wireStatus
	case p.Status.Code != 0:
		st.Code, st.Message = 500, p.Status.Message
		if p.Status.Code > 0 && p.Status.Code < len(rpcHTTP) {
			st.Code = rpcHTTP[p.Status.Code]
		}
		switch p.Status.Code {
		case rpcAborted:
			st.Reason = "Conflict"
		case rpcAlreadyExists:
			st.Reason = "AlreadyExists"
		}
	default:
		st.Code = 200
		if l.Verb == "create" {
			// The API server answers every create it accepts 201.
			st.Code = 201
		}
		if r != nil && r.Kind != "Status" {
			l.setResponseRV(r.Metadata.ResourceVersion)
		}
	}
	if q := p.Request; q != nil && l.ObjectRef != nil && (l.Verb == "update" || l.Verb == "create") {
		// objectRef.resourceVersion is the precondition of a decoded body.
		l.ObjectRef.ResourceVersion = q.Metadata.ResourceVersion
	}
	return l.text("")
}

// gkeVerb is the Kubernetes verb of an AuditLog methodName
// (io.k8s.GROUP.VERSION.RESOURCE[.SUBRESOURCE].VERB).
func gkeVerb(method string) string {
	return method[strings.LastIndexByte(method, '.')+1:]
}

// gkeObjectRef reads an AuditLog resourceName: GROUP/VERSION/[namespaces/
// NS/]RESOURCE[/NAME[/SUBRESOURCE]], the core group named core. A
// Namespace's own name (core/v1/namespaces/NAME) is told from a namespace
// by its methodName (io.k8s.core.v1.namespaces.VERB).
func gkeObjectRef(name, method string) *ObjectRef {
	parts := strings.Split(name, "/")
	if len(parts) < 3 {
		return nil
	}
	ref := &ObjectRef{APIGroup: parts[0], APIVersion: parts[1]}
	if ref.APIGroup == "core" {
		ref.APIGroup = ""
	}
	rest := parts[2:]
	nsObject := strings.HasPrefix(method, "io.k8s.core.v1.namespaces.")
	if rest[0] == "namespaces" && len(rest) >= 3 && !nsObject {
		ref.Namespace, rest = rest[1], rest[2:]
	}
	ref.Resource = rest[0]
	if len(rest) > 1 {
		ref.Name = rest[1]
	}
	if len(rest) > 2 {
		ref.Subresource = strings.Join(rest[2:], "/")
	}
	return ref
}

// azRow is one row of az monitor log-analytics query over AKSAudit or
// AKSAuditAdmin: the columns read, each a JSON value (the CLI prints
// strings; dynamic columns are JSON text in them).
type azRow struct {
	AuditID             *string         `json:"AuditId"`
	Level               string          `json:"Level"`
	Stage               *string         `json:"Stage"`
	RequestURI          string          `json:"RequestUri"`
	Verb                *string         `json:"Verb"`
	User                json.RawMessage `json:"User"`
	UserAgent           string          `json:"UserAgent"`
	ObjectRef           json.RawMessage `json:"ObjectRef"`
	ResponseStatus      json.RawMessage `json:"ResponseStatus"`
	ResponseObject      json.RawMessage `json:"ResponseObject"`
	RequestReceivedTime *string         `json:"RequestReceivedTime"`
	StageReceivedTime   *string         `json:"StageReceivedTime"`
	PodName             string          `json:"PodName"`
}

// azNone is how the CLI prints a null (Python's str(None)).
const azNone = "None"

// azLine turns one AKSAudit row into an audit event's line, its PodName
// (the API server's pod) kept as the replica.
func azLine(raw []byte) (string, error) {
	var r azRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("a row is not an object of AKSAudit columns: %v", err)
	}
	for _, c := range []struct {
		name string
		v    *string
	}{{"AuditId", r.AuditID}, {"Stage", r.Stage}, {"Verb", r.Verb}, {"RequestReceivedTime", r.RequestReceivedTime}} {
		if c.v == nil {
			return "", fmt.Errorf("a row has no %s column: query AKSAudit or AKSAuditAdmin without projecting its columns away", c.name)
		}
	}
	l := newLineEvent()
	l.AuditID, l.Stage, l.Verb, l.RequestURI, l.UserAgent = *r.AuditID, *r.Stage, *r.Verb, azString(r.RequestURI), azString(r.UserAgent)
	if lv := azString(r.Level); lv != "" {
		l.Level = lv
	}
	var err error
	if l.RequestReceivedTimestamp, err = azTime("RequestReceivedTime", *r.RequestReceivedTime); err != nil {
		return "", err
	}
	l.StageTimestamp = l.RequestReceivedTimestamp
	if r.StageReceivedTime != nil {
		if l.StageTimestamp, err = azTime("StageReceivedTime", *r.StageReceivedTime); err != nil {
			return "", err
		}
	}
	var object wireObject
	for _, c := range []struct {
		name string
		raw  json.RawMessage
		into any
	}{{"User", r.User, &l.User}, {"ObjectRef", r.ObjectRef, &l.ObjectRef}, {"ResponseStatus", r.ResponseStatus, &l.ResponseStatus}} {
		if err := azDynamic(c.raw, c.into); err != nil {
			return "", fmt.Errorf("column %s: %v", c.name, err)
		}
	}
	// A body too big is the string "skipped-too-big-size-object": no
	// version then.
	_ = azDynamic(r.ResponseObject, &object)
	l.setResponseRV(object.Metadata.ResourceVersion)
	return l.text(azString(r.PodName))
}

func azString(s string) string {
	if s == azNone {
		return ""
	}
	return s
}

func azTime(column, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("column %s: %q is not a time", column, s)
	}
	return t, nil
}

// azDynamic decodes a dynamic column into v: JSON text in a string (as
// the CLI prints it) or the JSON value itself; empty, null and None leave
// v as it is.
func azDynamic(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" || s == azNone {
			return nil
		}
		raw = json.RawMessage(s)
	}
	return json.Unmarshal(raw, v)
}
