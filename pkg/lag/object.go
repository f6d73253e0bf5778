package lag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// Object is the narrow view of an object that lag needs. Optional numbers
// are pointers: nil means the field was absent (or not an integer), which is
// a different answer from 0.
type Object struct {
	Name      string
	Namespace string
	UID       string
	// Generation is metadata.generation.
	Generation *int64
	Created    time.Time
	// ObservedGeneration is status.observedGeneration.
	ObservedGeneration *int64
	// Conditions are the status conditions that carry an observedGeneration.
	Conditions []Condition

	managedFields json.RawMessage
	// raw is the object's JSON, kept only where the rollout check needs it
	// (Config.For is RolledOut).
	raw []byte
}

// Condition is a status condition that carries its own observedGeneration.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration"`
}

// rawObject is what the decoder reads of each list item; everything else
// (spec, most of metadata) is skipped without being kept.
type rawObject struct {
	Metadata struct {
		Name              string          `json:"name"`
		Namespace         string          `json:"namespace"`
		UID               string          `json:"uid"`
		Generation        json.RawMessage `json:"generation"`
		CreationTimestamp string          `json:"creationTimestamp"`
		ManagedFields     json.RawMessage `json:"managedFields"`
	} `json:"metadata"`
	Status json.RawMessage `json:"status"`
}

// rawStatus is read leniently: custom resources may put anything there.
type rawStatus struct {
	ObservedGeneration json.RawMessage `json:"observedGeneration"`
	Conditions         json.RawMessage `json:"conditions"`
}

type rawCondition struct {
	Type               json.RawMessage `json:"type"`
	Status             json.RawMessage `json:"status"`
	ObservedGeneration json.RawMessage `json:"observedGeneration"`
}

// DecodeObject decodes one object from its JSON. Only metadata must be well
// formed; a status of an unexpected shape (a custom resource without a
// schema) reads as "no observedGeneration", never as an error.
func DecodeObject(data []byte) (Object, error) {
	var raw rawObject
	if err := json.Unmarshal(data, &raw); err != nil {
		return Object{}, fmt.Errorf("decoding object: %w", err)
	}
	o := raw.object()
	o.raw = data
	return o, nil
}

func (raw *rawObject) object() Object {
	o := Object{
		Name:          raw.Metadata.Name,
		Namespace:     raw.Metadata.Namespace,
		UID:           raw.Metadata.UID,
		Generation:    int64Field(raw.Metadata.Generation),
		managedFields: raw.Metadata.ManagedFields,
	}
	if t, err := time.Parse(time.RFC3339, raw.Metadata.CreationTimestamp); err == nil {
		o.Created = t
	}
	var st rawStatus
	if len(raw.Status) == 0 || json.Unmarshal(raw.Status, &st) != nil {
		return o
	}
	o.ObservedGeneration = int64Field(st.ObservedGeneration)
	var conds []json.RawMessage
	if len(st.Conditions) == 0 || json.Unmarshal(st.Conditions, &conds) != nil {
		return o
	}
	for _, c := range conds {
		var rc rawCondition
		if json.Unmarshal(c, &rc) != nil {
			continue
		}
		og := int64Field(rc.ObservedGeneration)
		if og == nil {
			continue
		}
		o.Conditions = append(o.Conditions, Condition{Type: stringField(rc.Type), Status: stringField(rc.Status), ObservedGeneration: *og})
	}
	return o
}

// int64Field reads a JSON integer; null, a missing field, a fraction, a
// string or an out-of-range number read as absent.
func int64Field(raw json.RawMessage) *int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func stringField(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// State is where an object stands; see the package documentation.
type State string

// The states.
const (
	Current       State = "current"
	Lagging       State = "lagging"
	NeverObserved State = "never-observed"
	NoGeneration  State = "no-generation"
	// With Config.For RolledOut, an object whose generation has been
	// observed is current only once rolled out; until then it is
	// rolling-out, paused (a Deployment with spec.paused) or stalled (its
	// progress deadline passed, or a Stalled condition): see Goal.
	RollingOut State = "rolling-out"
	Paused     State = "paused"
	Stalled    State = "stalled"
)

// Classification is what the comparison of generations says of an object.
type Classification struct {
	State State
	// Lag is the largest gap between the generation and an observedGeneration
	// (status or condition); 0 unless lagging.
	Lag int64
	// LaggingConditions are the conditions whose observedGeneration is behind.
	LaggingConditions []Condition
	// Rollout is what the rollout check says of an object that is not
	// rolled out (kubectl rollout status's words, or the condition that
	// holds it), with Config.For RolledOut.
	Rollout string
}

// Classify compares the object's generation with its observedGenerations.
// An observedGeneration ahead of the generation (which a buggy controller
// can write) does not count as lag.
func Classify(o Object) Classification {
	if o.Generation == nil {
		return Classification{State: NoGeneration}
	}
	gen := *o.Generation
	if o.ObservedGeneration == nil && len(o.Conditions) == 0 {
		return Classification{State: NeverObserved}
	}
	var c Classification
	if o.ObservedGeneration != nil && *o.ObservedGeneration < gen {
		c.Lag = gen - *o.ObservedGeneration
	}
	for _, cond := range o.Conditions {
		if cond.ObservedGeneration < gen {
			c.LaggingConditions = append(c.LaggingConditions, cond)
			c.Lag = max(c.Lag, gen-cond.ObservedGeneration)
		}
	}
	if c.Lag > 0 {
		c.State = Lagging
	} else {
		c.State = Current
	}
	return c
}

// Writers is what managedFields say about an object's spec and status.
type Writers struct {
	// SpecTime is when the newest write that touched the spec happened; zero
	// when no managedFields entry owns a field under .spec.
	SpecTime time.Time
	// SpecManager made that write.
	SpecManager string
	// SpecUntimed says an entry that owns spec fields carries no time: the
	// API server records none for writes through the scale subresource, so
	// the newest spec write may be later than SpecTime.
	SpecUntimed bool
	// UntimedManager made the untimed spec write.
	UntimedManager string
	// StatusTime is the newest time of an entry that owns status fields.
	StatusTime time.Time
	// Observer is the manager that writes the status: the owner of
	// .status.observedGeneration if any, else of any status field, preferring
	// writes through the status subresource.
	Observer string
}

var (
	specPE   = fieldpath.PathElement{FieldName: ptr("spec")}
	statusPE = fieldpath.PathElement{FieldName: ptr("status")}
	ogPath   = fieldpath.MakePathOrDie("status", "observedGeneration")
)

func ptr[T any](v T) *T { return &v }

// Writers decodes the object's managedFields. Objects without them (or with
// an invalid entry) give an empty answer and the error.
func (o Object) Writers() (Writers, error) {
	var w Writers
	if len(o.managedFields) == 0 || string(o.managedFields) == "null" {
		return w, managedfields.ErrNoManagedFields
	}
	var mfs []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(o.managedFields, &mfs); err != nil {
		return w, fmt.Errorf("metadata.managedFields: %w", err)
	}
	bestScore := -1
	for i, mf := range mfs {
		e, err := managedfields.DecodeEntry(i, mf)
		if err != nil {
			return Writers{}, err
		}
		if touches(e.Fields(), specPE) {
			switch {
			case e.Time.IsZero():
				w.SpecUntimed, w.UntimedManager = true, e.Manager
			case !e.Time.Before(w.SpecTime):
				w.SpecTime, w.SpecManager = e.Time, e.Manager
			}
		}
		if touches(e.Fields(), statusPE) {
			if e.Time.After(w.StatusTime) {
				w.StatusTime = e.Time
			}
			score := 0
			if e.Fields().Has(ogPath) {
				score += 2
			}
			if e.Subresource == "status" {
				score++
			}
			if score > bestScore {
				bestScore, w.Observer = score, e.Manager
			}
		}
	}
	return w, nil
}

// touches reports whether the set owns the field pe or anything below it.
func touches(s *fieldpath.Set, pe fieldpath.PathElement) bool {
	return s.Members.Has(pe) || !s.WithPrefix(pe).Empty()
}
