package leases

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// FuzzAnnotationRecord holds the annotation lock reader to client-go's
// LeaderElectionRecord: whatever the annotation holds, it does not panic,
// and what it reads is what the record says.
func FuzzAnnotationRecord(f *testing.F) {
	f.Add(`{"holderIdentity":"pod-x","leaseDurationSeconds":30,"acquireTime":"2026-11-27T09:59:00Z","renewTime":"2026-11-27T10:00:00Z","leaderTransitions":3}`)
	f.Add(`{"holderIdentity":"","leaseDurationSeconds":-1}`)
	f.Add(`{"renewTime":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, value string) {
		r, err := AnnotationRecord(value)
		var ler resourcelock.LeaderElectionRecord
		if jerr := json.Unmarshal([]byte(value), &ler); (err == nil) != (jerr == nil) {
			t.Fatalf("AnnotationRecord error %v, json error %v", err, jerr)
		}
		if err != nil {
			return
		}
		want := Record{Holder: ler.HolderIdentity, Duration: time.Duration(ler.LeaseDurationSeconds) * time.Second,
			Acquire: ler.AcquireTime.Time, Renew: ler.RenewTime.Time, Transitions: int32(ler.LeaderTransitions),
			Strategy: string(ler.Strategy), PreferredHolder: ler.PreferredHolder}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}
