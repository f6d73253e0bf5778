package leases

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// AnnotationKey is the legacy lock's annotation on Endpoints and ConfigMaps.
const AnnotationKey = resourcelock.LeaderElectionRecordAnnotationKey

// Record is a lock's leader-election record, from a Lease's spec or a
// legacy annotation. Times are the holder's clock.
type Record struct {
	Holder          string
	Duration        time.Duration
	Acquire, Renew  time.Time
	Transitions     int32
	Strategy        string
	PreferredHolder string
}

// expiry is when the record runs out; zero when it has no renew time.
func (r *Record) expiry() time.Time {
	if r.Renew.IsZero() {
		return time.Time{}
	}
	return r.Renew.Add(r.Duration)
}

// LeaseRecord reads a coordination.k8s.io/v1 Lease's spec. Absent fields
// stay zero: a Lease nobody holds has no holderIdentity.
func LeaseRecord(u *unstructured.Unstructured) (Record, error) {
	var r Record
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok {
		return r, nil
	}
	r.Holder, _, _ = unstructured.NestedString(spec, "holderIdentity")
	r.Strategy, _, _ = unstructured.NestedString(spec, "strategy")
	r.PreferredHolder, _, _ = unstructured.NestedString(spec, "preferredHolder")
	if d, found, err := unstructured.NestedInt64(spec, "leaseDurationSeconds"); err != nil {
		return r, fmt.Errorf("spec.leaseDurationSeconds: %w", err)
	} else if found {
		r.Duration = time.Duration(d) * time.Second
	}
	if n, found, err := unstructured.NestedInt64(spec, "leaseTransitions"); err != nil {
		return r, fmt.Errorf("spec.leaseTransitions: %w", err)
	} else if found {
		r.Transitions = int32(n)
	}
	var err error
	if r.Acquire, err = microTime(spec, "acquireTime"); err != nil {
		return r, err
	}
	r.Renew, err = microTime(spec, "renewTime")
	return r, err
}

// microTime reads a MicroTime field ("2026-11-27T13:40:01.123456Z"); zero
// when absent.
func microTime(spec map[string]any, field string) (time.Time, error) {
	s, found, err := unstructured.NestedString(spec, field)
	if err != nil || !found || s == "" {
		if err != nil {
			return time.Time{}, fmt.Errorf("spec.%s: %w", field, err)
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("spec.%s: %w", field, err)
	}
	return t, nil
}

// AnnotationRecord reads a legacy lock's annotation value (client-go's
// resourcelock.LeaderElectionRecord as JSON).
func AnnotationRecord(value string) (Record, error) {
	var ler resourcelock.LeaderElectionRecord
	if err := json.Unmarshal([]byte(value), &ler); err != nil {
		return Record{}, fmt.Errorf("annotation %s: %w", AnnotationKey, err)
	}
	return Record{
		Holder: ler.HolderIdentity, Duration: time.Duration(ler.LeaseDurationSeconds) * time.Second,
		Acquire: ler.AcquireTime.Time, Renew: ler.RenewTime.Time, Transitions: int32(ler.LeaderTransitions),
		Strategy: string(ler.Strategy), PreferredHolder: ler.PreferredHolder,
	}, nil
}

// CandidateOf reads a LeaseCandidate: the Lease it competes for and what
// it says of itself.
func CandidateOf(u *unstructured.Unstructured) (lease string, c Candidate, err error) {
	spec, _ := u.Object["spec"].(map[string]any)
	c.Name = u.GetName()
	lease, _, _ = unstructured.NestedString(spec, "leaseName")
	c.BinaryVersion, _, _ = unstructured.NestedString(spec, "binaryVersion")
	c.EmulationVersion, _, _ = unstructured.NestedString(spec, "emulationVersion")
	c.Strategy, _, _ = unstructured.NestedString(spec, "strategy")
	for _, f := range []struct {
		name string
		into **time.Time
	}{{"renewTime", &c.RenewTime}, {"pingTime", &c.PingTime}} {
		t, err := microTime(spec, f.name)
		if err != nil {
			return "", c, err
		}
		if !t.IsZero() {
			*f.into = &t
		}
	}
	return lease, c, nil
}
