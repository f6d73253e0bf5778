// Package cloudexport turns an API server's audit log (JSON lines of
// audit.k8s.io/v1 Event) into what the cloud CLIs print for the same
// events, for tests: gcloud logging read --format=json over GKE's Cloud
// Logging entries (Google's AuditLog in protoPayload, following the
// LogEntry and AuditLog reference) and az monitor log-analytics query over
// AKSAudit (the table's documented columns, printed as the CLI prints
// them). Lacking gives the same log without what each shape cannot carry,
// so a test can hold the report of an export to the report of that log.
//
// Only tests import it.
package cloudexport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// event is the part of an audit event these shapes carry.
type event struct {
	AuditID    string `json:"auditID"`
	Level      string `json:"level"`
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string              `json:"username"`
		Groups   []string            `json:"groups,omitempty"`
		Extra    map[string][]string `json:"extra,omitempty"`
	} `json:"user"`
	ImpersonatedUser json.RawMessage `json:"impersonatedUser,omitempty"`
	SourceIPs        []string        `json:"sourceIPs"`
	UserAgent        string          `json:"userAgent"`
	ObjectRef        *struct {
		Resource        string `json:"resource,omitempty"`
		Namespace       string `json:"namespace,omitempty"`
		Name            string `json:"name,omitempty"`
		APIGroup        string `json:"apiGroup,omitempty"`
		APIVersion      string `json:"apiVersion,omitempty"`
		Subresource     string `json:"subresource,omitempty"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"objectRef,omitempty"`
	ResponseStatus struct {
		Code    int    `json:"code"`
		Reason  string `json:"reason,omitempty"`
		Message string `json:"message,omitempty"`
		Details *struct {
			Kind string `json:"kind,omitempty"`
		} `json:"details,omitempty"`
	} `json:"responseStatus"`
	ResponseObject *struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion,omitempty"`
		} `json:"metadata"`
	} `json:"responseObject,omitempty"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	StageTimestamp           time.Time `json:"stageTimestamp"`
}

func parse(lines []string) ([]event, error) {
	var out []event
	for i, l := range lines {
		var e event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			if i == len(lines)-1 {
				// A last line cut short: the API server was writing it.
				break
			}
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// rpcCode is the google.rpc.Code of an HTTP status, the reverse of
// google/rpc/code.proto's HTTP mapping (409 is ABORTED for a conflict and
// ALREADY_EXISTS for a create of what exists).
func rpcCode(code int, reason string) int {
	switch {
	case code/100 == 2:
		return 0
	case code == 409 && reason == "AlreadyExists":
		return 6
	case code == 409:
		return 10
	}
	if c, ok := map[int]int{499: 1, 400: 3, 422: 3, 504: 4, 404: 5, 403: 7, 429: 8, 500: 13, 501: 12, 503: 14, 401: 16}[code]; ok {
		return c
	}
	return 2
}

// rpcHTTP is google/rpc/code.proto's HTTP mapping, for Lacking.
var rpcHTTP = map[int]int{0: 200, 1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 10: 409, 12: 501, 13: 500, 14: 503, 16: 401}

// Gcloud is gcloud logging read --format=json over the events: a JSON
// array of LogEntry, keys sorted and indented as gcloud prints them.
// Each has protoPayload (AuditLog: methodName, resourceName,
// authenticationInfo.principalEmail, requestMetadata, status) and the
// entry's insertId (the audit ID), timestamp (the stage timestamp),
// labels, operation, resource and logName. Bodies adds the request's and
// the response's resourceVersion, as entries of a RequestResponse-level
// rule carry them, and a refused request's Status as the response.
func Gcloud(lines []string, bodies bool) ([]byte, error) {
	evs, err := parse(lines)
	if err != nil {
		return nil, err
	}
	entries := []map[string]any{}
	for _, e := range evs {
		entries = append(entries, gkeEntry(e, bodies))
	}
	return json.MarshalIndent(entries, "", "  ")
}

func gkeEntry(e event, bodies bool) map[string]any {
	group, version, resourceName, method := "core", "", "", "io.k8s."+e.Verb
	if r := e.ObjectRef; r != nil {
		if r.APIGroup != "" {
			group = r.APIGroup
		}
		version = r.APIVersion
		parts := []string{group, version}
		if r.Namespace != "" {
			parts = append(parts, "namespaces", r.Namespace)
		}
		parts = append(parts, r.Resource)
		if r.Name != "" {
			parts = append(parts, r.Name)
		}
		if r.Subresource != "" {
			parts = append(parts, r.Subresource)
		}
		resourceName = strings.Join(parts, "/")
		short := strings.TrimSuffix(group, ".k8s.io")
		method = strings.Join(append([]string{"io.k8s", short, version, r.Resource}, strings.Fields(r.Subresource+" "+e.Verb)...), ".")
	}
	status := map[string]any{}
	if c := rpcCode(e.ResponseStatus.Code, e.ResponseStatus.Reason); c != 0 {
		status = map[string]any{"code": c, "message": e.ResponseStatus.Message}
	}
	payload := map[string]any{
		"@type": "type.googleapis.com/google.cloud.audit.AuditLog", "serviceName": "k8s.io",
		"methodName": method, "resourceName": resourceName,
		"authenticationInfo": map[string]any{"principalEmail": e.User.Username},
		"authorizationInfo":  []map[string]any{{"granted": true, "permission": method, "resource": resourceName}},
		"requestMetadata":    map[string]any{"callerIp": strings.Join(e.SourceIPs, ""), "callerSuppliedUserAgent": e.UserAgent},
		"status":             status,
	}
	if bodies {
		addBodies(payload, e)
	}
	return map[string]any{
		"insertId": e.AuditID, "logName": "projects/demo/logs/cloudaudit.googleapis.com%2Factivity",
		"labels":       map[string]string{"authorization.k8s.io/decision": "allow"},
		"operation":    map[string]any{"id": e.AuditID, "producer": "k8s.io", "first": true, "last": true},
		"protoPayload": payload, "receiveTimestamp": e.StageTimestamp.Add(9 * time.Second).Format(time.RFC3339Nano),
		"resource":  map[string]any{"type": "k8s_cluster", "labels": map[string]string{"cluster_name": "demo", "location": "europe-west1", "project_id": "demo"}},
		"timestamp": e.StageTimestamp.Format(time.RFC3339Nano),
	}
}

func addBodies(payload map[string]any, e event) {
	if r := e.ObjectRef; r != nil && r.ResourceVersion != "" {
		payload["request"] = map[string]any{"@type": "core.k8s.io/v1.ConfigMap", "metadata": map[string]any{"resourceVersion": r.ResourceVersion}}
	}
	st := e.ResponseStatus
	switch {
	case st.Code/100 != 2:
		s := map[string]any{"@type": "core.k8s.io/v1.Status", "apiVersion": "v1", "kind": "Status", "code": st.Code, "reason": st.Reason, "message": st.Message, "status": "Failure", "metadata": map[string]any{}}
		if st.Details != nil {
			s["details"] = map[string]any{"kind": st.Details.Kind}
		}
		payload["response"] = s
	case e.ResponseObject != nil:
		payload["response"] = map[string]any{"@type": "core.k8s.io/v1.ConfigMap", "metadata": map[string]any{"resourceVersion": e.ResponseObject.Metadata.ResourceVersion}}
	}
}

// AzColumns are AKSAudit's columns, in the table's order, as
// az monitor log-analytics query prints them after TableName.
var AzColumns = []string{"TenantId", "TimeGenerated", "Level", "AuditId", "Stage", "RequestUri", "Verb", "User", "SourceIps", "UserAgent", "ObjectRef", "ResponseStatus", "RequestObject", "ResponseObject", "RequestReceivedTime", "StageReceivedTime", "Annotations", "PodName", "SourceSystem", "Type", "_ResourceId"}

// Az is az monitor log-analytics query --output json over AKSAudit rows
// of the events: each row an object, TableName first, then the columns,
// every value a string (the CLI prints str(value): dynamic columns as
// JSON text, nulls as None). The API server pod of each event is
// kube-apiserver-0.
func Az(lines []string) ([]byte, error) {
	evs, err := parse(lines)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, e := range evs {
		row := azRow(e)
		b.WriteString("  {\n    \"TableName\": \"PrimaryResult\"")
		for _, c := range AzColumns {
			v, _ := json.Marshal(row[c])
			fmt.Fprintf(&b, ",\n    %q: %s", c, v)
		}
		b.WriteString("\n  }")
		if i < len(evs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}

func azRow(e event) map[string]string {
	text := func(v any) string {
		b, _ := json.Marshal(v)
		if string(b) == "null" {
			return "None"
		}
		return string(b)
	}
	ts := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }
	resp := "None"
	if e.ResponseObject != nil {
		resp = text(e.ResponseObject)
	}
	return map[string]string{
		"TenantId": "8c5f99a3-0000-4000-8000-000000000000", "TimeGenerated": ts(e.StageTimestamp.Add(time.Second)),
		"Level": e.Level, "AuditId": e.AuditID, "Stage": e.Stage, "RequestUri": e.RequestURI, "Verb": e.Verb,
		"User": text(e.User), "SourceIps": text(e.SourceIPs), "UserAgent": e.UserAgent, "ObjectRef": text(e.ObjectRef),
		"ResponseStatus": text(e.ResponseStatus), "RequestObject": "None", "ResponseObject": resp,
		"RequestReceivedTime": ts(e.RequestReceivedTimestamp), "StageReceivedTime": ts(e.StageTimestamp),
		"Annotations": `{"authorization.k8s.io/decision":"allow"}`, "PodName": "kube-apiserver-0",
		"SourceSystem": "Azure", "Type": "AKSAudit",
		"_ResourceId": "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/rg/providers/microsoft.containerservice/managedclusters/demo",
	}
}

// The shapes Lacking knows.
const (
	ShapeGcloud = "gcloud"
	ShapeAz     = "az"
)

// Lacking is the log without what shape cannot carry, as JSON lines: for
// gcloud (no bodies), the request URI (field manager, dryRun, force),
// the user's groups and extra (the pod), the impersonated user, the
// resource versions, the response's reason beyond what the rpc code says
// and its details, a 2xx code beyond 200 (201 for a create), and the
// request's receipt time (both times are the entry's timestamp); for az,
// the impersonated user.
func Lacking(lines []string, shape string) ([]string, error) {
	evs, err := parse(lines)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range evs {
		e.ImpersonatedUser = nil
		if shape == ShapeGcloud {
			lackGcloud(&e)
		}
		m := map[string]any{}
		b, _ := json.Marshal(e)
		_ = json.Unmarshal(b, &m)
		m["kind"], m["apiVersion"] = "Event", "audit.k8s.io/v1"
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	return out, nil
}

func lackGcloud(e *event) {
	e.RequestURI, e.User.Groups, e.User.Extra = "", nil, nil
	if e.ObjectRef != nil {
		e.ObjectRef.ResourceVersion = ""
	}
	e.ResponseObject = nil
	st := &e.ResponseStatus
	c := rpcCode(st.Code, st.Reason)
	st.Details, st.Reason = nil, ""
	switch {
	case c == 0 && e.Verb == "create":
		st.Code, st.Message = 201, ""
	case c == 0:
		st.Code, st.Message = 200, ""
	default:
		st.Code = rpcHTTP[c]
		if c == 10 {
			st.Reason = "Conflict"
		} else if c == 6 {
			st.Reason = "AlreadyExists"
		}
	}
	e.RequestReceivedTimestamp = e.StageTimestamp
}
