package ownersprint

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func checkSameJSON(t *testing.T, name string, r Report) {
	t.Helper()
	want, werr := json.MarshalIndent(r, "", "  ")
	got, err := r.AppendIndentedJSON(nil, nil)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%s: AppendIndentedJSON error %v, MarshalIndent error %v", name, err, werr)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("%s: AppendIndentedJSON differs from json.MarshalIndent (-want +got):\n%s", name, diff)
	}
}

// TestReportJSONMatchesMarshalIndent writes random reports (odd strings,
// nil and empty lists, shared and unshared owner lists, times, hazards)
// and the fixtures' reports both ways.
func TestReportJSONMatchesMarshalIndent(t *testing.T) {
	for _, files := range [][]string{{"deployment.yaml"}, {"hazards.yaml"}, {"secret.yaml"}, {"deployment.yaml", "hazards.yaml"}} {
		checkSameJSON(t, fmt.Sprint(files), NewReport(load(t, managedfields.Filter{}, files...), nil))
	}
	checkSameJSON(t, "no objects", NewReport(nil, nil))
	checkSameJSON(t, "nil items", Report{TypeMeta: output.NewTypeMeta(Kind)})

	strs := []string{"", "web", "a\"b", `back\slash`, "<script>&", "tab\t", "nl\n", "\x00\x1f\x7f", "é名", "\xff\xfe", "\u2028\u2029", "k:{\"name\":\"nginx\"}"}
	rng := rand.New(rand.NewPCG(20261121, 3))
	str := func() string { return strs[rng.IntN(len(strs))] + strs[rng.IntN(len(strs))] }
	times := []time.Time{{}, time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 15, 0, 0, 123456789, time.FixedZone("x", 3600))}
	owner := func(i int) managedfields.Owner {
		return managedfields.Owner{Entry: i, Manager: str(), Operation: metav1.ManagedFieldsOperationType(str()), APIVersion: str(), Subresource: str(), Time: times[rng.IntN(len(times))]}
	}
	var paths []fieldpath.Path
	for _, p := range []string{".spec.replicas", `.spec.containers[name="a\"b"].image`, ".metadata.finalizers[=\"x<y\"]", ".spec.l[3]"} {
		fp, err := managedfields.ParsePath(p)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, fp)
	}
	for i := range 300 {
		r := NewReport(nil, nil)
		if rng.IntN(10) == 0 {
			r.Items = nil
		}
		for range rng.IntN(3) {
			or := ObjectReport{APIVersion: str(), Kind: str(), Namespace: str(), Name: str(), Source: str(), Entries: []EntryReport{}, Fields: []FieldReport{}, Hazards: []managedfields.Hazard{}}
			pool := []managedfields.Owner{owner(0), owner(1), owner(2)}
			for e := range rng.IntN(3) {
				or.Entries = append(or.Entries, EntryReport{Index: e, Manager: str(), Operation: str(), APIVersion: str(), Subresource: str(), Time: times[rng.IntN(len(times))], Fields: rng.IntN(5)})
			}
			for range rng.IntN(6) {
				f := FieldReport{Path: str(), Present: rng.IntN(2) == 0}
				if rng.IntN(2) == 0 {
					f.Line, f.Column = rng.IntN(3)*rng.IntN(1000), rng.IntN(3)*rng.IntN(80)
				}
				switch rng.IntN(4) {
				case 0:
				case 1:
					f.Elements = []string{}
				default:
					for range 1 + rng.IntN(3) {
						f.Elements = append(f.Elements, str())
					}
				}
				switch rng.IntN(4) {
				case 0:
				case 1:
					f.Owners = []managedfields.Owner{owner(rng.IntN(3))} // same entry, other content
				default:
					f.Owners = pool[:1+rng.IntN(3)]
				}
				or.Fields = append(or.Fields, f)
			}
			for range rng.IntN(3) {
				h := managedfields.Hazard{Type: managedfields.HazardType(str()), Message: str()}
				if rng.IntN(4) > 0 {
					h.Owners = pool[:1+rng.IntN(3)]
				}
				for range rng.IntN(3) {
					h.Fields = append(h.Fields, paths[rng.IntN(len(paths))])
				}
				or.Hazards = append(or.Hazards, h)
			}
			switch rng.IntN(8) {
			case 0:
				or.Fields = nil
			case 1:
				or.Entries, or.Hazards = nil, nil
			}
			r.Items = append(r.Items, or)
		}
		checkSameJSON(t, fmt.Sprintf("report %d", i), r)
	}
}

func TestReportJSONOfLargeObject(t *testing.T) {
	u := bigObject(t, 200, 12)
	checkSameJSON(t, "large object", NewReport(analyze(t, u), nil))
}
