package framework

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnersReport mirrors the documented schema of kubectl rv owners -o json
// (docs/owners.md), so that tests read it the way a CI script would.
type OwnersReport struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Items      []OwnersObjectReport `json:"items"`
}

// OwnersObjectReport is one object of an OwnersReport.
type OwnersObjectReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Source     string `json:"source"`
	Entries    []struct {
		Index       int       `json:"index"`
		Manager     string    `json:"manager"`
		Operation   string    `json:"operation"`
		APIVersion  string    `json:"apiVersion"`
		Subresource string    `json:"subresource"`
		Time        time.Time `json:"time"`
		Fields      int       `json:"fields"`
	} `json:"entries"`
	Fields  []OwnersField `json:"fields"`
	Hazards []struct {
		Type    string        `json:"type"`
		Owners  []OwnersOwner `json:"owners"`
		Fields  []string      `json:"fields"`
		Message string        `json:"message"`
	} `json:"hazards"`
}

// OwnersField is one owned field of an OwnersReport.
type OwnersField struct {
	Path     string        `json:"path"`
	Elements []string      `json:"elements"`
	Owners   []OwnersOwner `json:"owners"`
	Present  bool          `json:"present"`
}

// OwnersOwner is one owner of a field.
type OwnersOwner struct {
	Entry       int    `json:"entry"`
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	APIVersion  string `json:"apiVersion"`
	Subresource string `json:"subresource"`
}

// ConflictID names a manager the way the API server's conflict causes do:
// the manager, its subresource and, for Update entries, the apiVersion.
func (o OwnersOwner) ConflictID() string {
	id := o.Manager
	if o.Subresource != "" {
		id += " subresource=" + o.Subresource
	}
	if o.Operation == string(metav1.ManagedFieldsOperationUpdate) {
		id += " using " + o.APIVersion
	}
	return id
}

// ParseOwnersReport decodes kubectl rv owners -o json output.
func ParseOwnersReport(out string) (OwnersReport, error) {
	var r OwnersReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Errorf("owners -o json is not JSON: %w\n%s", err, out)
	}
	return r, nil
}

// Field returns the report's field at path, if owned.
func (r OwnersObjectReport) Field(path string) (OwnersField, bool) {
	for _, f := range r.Fields {
		if f.Path == path {
			return f, true
		}
	}
	return OwnersField{}, false
}

var conflictRE = regexp.MustCompile(`^conflict with "((?:[^"\\]|\\.)*)"(?: with subresource "([^"]*)")?(?: using (\S+))?`)

// ApplyConflicts returns, per field path, the sorted manager IDs (see
// ConflictID) an apply conflict error names. ok is false when err is not an
// apply conflict.
func ApplyConflicts(err error) (conflicts map[string][]string, ok bool) {
	status, isStatus := err.(apierrors.APIStatus)
	if !isStatus || !apierrors.IsConflict(err) || status.Status().Details == nil {
		return nil, false
	}
	conflicts = map[string][]string{}
	for _, c := range status.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		m := conflictRE.FindStringSubmatch(c.Message)
		if m == nil {
			conflicts[c.Field] = append(conflicts[c.Field], "unparsed: "+c.Message)
			continue
		}
		id := strings.ReplaceAll(m[1], `\"`, `"`)
		if m[2] != "" {
			id += " subresource=" + m[2]
		}
		if m[3] != "" {
			id += " using " + m[3]
		}
		conflicts[c.Field] = append(conflicts[c.Field], id)
	}
	for k := range conflicts {
		sort.Strings(conflicts[k])
	}
	return conflicts, len(conflicts) > 0
}
