package lag

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
)

// Goal is what an object must reach before lag calls it done.
type Goal int

const (
	// ObservedGeneration is done when every observedGeneration the object
	// reports has caught up with its generation (--for generation).
	ObservedGeneration Goal = iota
	// RolledOut is done when, in addition, the object is rolled out
	// (--for rollout): as kubectl rollout status decides for Deployments,
	// StatefulSets and DaemonSets, and as the conditions kstatus reads
	// (Ready, Reconciling, Stalled, Progressing) say for other kinds.
	RolledOut
)

// rolloutKinds are the kinds kubectl rollout status knows.
var rolloutKinds = map[string]bool{"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true}

// classify is Classify, then, with cfg.For RolledOut, the rollout check of
// an object whose generation has been observed. A kind kubectl rollout
// status knows is checked once current; another kind also when it reports
// no observedGeneration, since its conditions may still say it is not
// ready.
func classify(cfg Config, t Target, o Object) Classification {
	c := Classify(o)
	if cfg.For != RolledOut || o.raw == nil {
		return c
	}
	if c.State != Current && (c.State != NeverObserved || rolloutKinds[t.Resource.Group+"/"+t.Kind]) {
		return c
	}
	if st, msg := assessRollout(t, o.raw); st != Current {
		c.State, c.Rollout = st, msg
	}
	return c
}

// assessRollout says whether the object in data, whose generation has
// been observed, is rolled out: Current, RollingOut, Paused or Stalled,
// with what kubectl rollout status or the condition says.
func assessRollout(t Target, data []byte) (State, string) {
	switch t.Resource.Group + "/" + t.Kind {
	case "apps/Deployment":
		var d appsv1.Deployment
		if err := json.Unmarshal(data, &d); err != nil {
			return Current, ""
		}
		return deploymentRollout(&d)
	case "apps/StatefulSet":
		var sts appsv1.StatefulSet
		if err := json.Unmarshal(data, &sts); err != nil {
			return Current, ""
		}
		return viewerState(statefulSetStatus(&sts))
	case "apps/DaemonSet":
		var ds appsv1.DaemonSet
		if err := json.Unmarshal(data, &ds); err != nil {
			return Current, ""
		}
		return viewerState(daemonSetStatus(&ds))
	}
	return conditionsRollout(data)
}

// deploymentRollout adds to kubectl's verdict what it does not say: that
// a Deployment waits because it is paused, and which condition stalled it.
func deploymentRollout(d *appsv1.Deployment) (State, string) {
	msg, done, err := deploymentStatus(d)
	switch {
	case err != nil:
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing {
				return Stalled, conditionSays(string(c.Type), string(c.Status), c.Reason, c.Message)
			}
		}
		return Stalled, err.Error()
	case done:
		return Current, ""
	case d.Spec.Paused:
		return Paused, "spec.paused is true: " + strings.TrimSpace(msg)
	}
	return RollingOut, strings.TrimSpace(msg)
}

// viewerState turns a status viewer's answer into a state. A viewer that
// cannot judge the object (an OnDelete update strategy) calls it done, as
// kubectl rollout status does before it fails.
func viewerState(msg string, done bool, err error) (State, string) {
	switch {
	case err != nil, done:
		return Current, ""
	}
	return RollingOut, strings.TrimSpace(msg)
}

// rolloutCondition is a status condition as the rollout check reads it.
type rolloutCondition struct {
	Type, Status, Reason, Message string
}

// conditionsRollout reads the conditions kstatus reads of a kind it has no
// rule for: Stalled True, or Progressing False for
// ProgressDeadlineExceeded, is stalled; Reconciling True, or Ready other
// than True, is still rolling out (but a Pod that completed is done). An
// object without those conditions is done once its generation is
// observed. A status of an unexpected shape reads as no conditions.
func conditionsRollout(data []byte) (State, string) {
	var raw struct {
		Status struct {
			Conditions []json.RawMessage `json:"conditions"`
		} `json:"status"`
	}
	if json.Unmarshal(data, &raw) != nil {
		return Current, ""
	}
	conds := map[string]rolloutCondition{}
	for _, c := range raw.Status.Conditions {
		var rc struct{ Type, Status, Reason, Message json.RawMessage }
		if json.Unmarshal(c, &rc) != nil {
			continue
		}
		t := stringField(rc.Type)
		conds[t] = rolloutCondition{t, stringField(rc.Status), stringField(rc.Reason), stringField(rc.Message)}
	}
	says := func(c rolloutCondition) string { return conditionSays(c.Type, c.Status, c.Reason, c.Message) }
	if c, ok := conds["Stalled"]; ok && c.Status == "True" {
		return Stalled, says(c)
	}
	if c, ok := conds["Progressing"]; ok && c.Status == "False" && c.Reason == "ProgressDeadlineExceeded" {
		return Stalled, says(c)
	}
	if c, ok := conds["Reconciling"]; ok && c.Status == "True" {
		return RollingOut, says(c)
	}
	if c, ok := conds["Ready"]; ok && c.Status != "True" && c.Reason != "PodCompleted" {
		return RollingOut, says(c)
	}
	return Current, ""
}

// conditionSays names a condition: "condition Progressing is False
// (ProgressDeadlineExceeded): the message".
func conditionSays(typ, status, reason, message string) string {
	s := fmt.Sprintf("condition %s is %s", typ, status)
	if reason != "" {
		s += " (" + reason + ")"
	}
	if message != "" {
		s += ": " + message
	}
	return s
}
