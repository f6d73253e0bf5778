package predict

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// KubectlApplyManager is kubectl apply --server-side's default field
// manager; kubectl keeps the last-applied annotation under
// kubectlLastAppliedManager only for it.
const KubectlApplyManager = "kubectl"

// kubectlLastAppliedManager is the manager kubectl apply --server-side
// (with its default manager) applies the last-applied annotation with, so
// that the move to server-side apply does not drop it.
const kubectlLastAppliedManager = "kubectl-last-applied"

// lastAppliedPath is the annotation's field.
var lastAppliedPath = fieldpath.MakePathOrDie("metadata", "annotations", LastAppliedAnnotation)

// CSAUpgrade is what the move from client-side to server-side apply does
// to an object last applied client-side: kubectl apply --server-side
// applies, then upgrades the managedFields of the client-side apply
// managers into its own Apply entry (k8s.io/client-go/util/csaupgrade)
// and applies again.
type CSAUpgrade struct {
	// Managers are the client-side apply managers: Update entries that
	// own the last-applied annotation (csaupgrade.FindFieldsOwners, as
	// kubectl finds them).
	Managers []string `json:"managers"`
	// Conflicts are the fields the apply conflicts on with them: without
	// the upgrade first, their values cannot change without force.
	Conflicts []string `json:"conflicts,omitempty"`
	// Moved are the fields the upgrade moves from them to the applier's
	// Apply entry: theirs after the apply.
	Moved []string `json:"moved,omitempty"`
	// Deleted are the fields kubectl's apply after the upgrade deletes:
	// set by the last client-side apply, not in the manifest, and owned by
	// no other manager (the annotation too, unless the applier is
	// kubectl, which keeps it under kubectl-last-applied).
	Deleted []string `json:"deleted,omitempty"`
	// Advice says what avoids the conflicts.
	Advice string `json:"advice"`
}

// csaManagers returns the client-side apply managers of live, as kubectl
// finds them.
func csaManagers(live *unstructured.Unstructured) sets.Set[string] {
	names := sets.New[string]()
	if live == nil {
		return names
	}
	for _, e := range csaupgrade.FindFieldsOwners(live.GetManagedFields(), metav1.ManagedFieldsOperationUpdate, fieldpath.NewSet(lastAppliedPath)) {
		names.Insert(e.Manager)
	}
	return names
}

// csaUpgrade predicts the move to server-side apply by manager with
// config, for live last applied client-side (nil when it was not): after
// is the apply's result (nil when it conflicts), conflicts its conflicts.
// kubectl upgrades the object the apply returned, so the fields a forced
// apply took have moved already.
func csaUpgrade(tc managedfields.TypeConverter, live, after, config *unstructured.Unstructured, manager string, conflicts []managedfields.Conflict) *CSAUpgrade {
	names := csaManagers(live)
	if names.Len() == 0 || config == nil {
		return nil
	}
	base := live
	if after != nil {
		base = after
	}
	u := &CSAUpgrade{Managers: sets.List(names)}
	for _, c := range conflicts {
		if names.Has(c.Manager) {
			u.Conflicts = append(u.Conflicts, c.Field)
		}
	}
	upgraded := base.DeepCopy()
	if err := csaupgrade.UpgradeManagedFields(upgraded, names, manager); err != nil {
		u.Advice = "the managedFields upgrade fails: " + err.Error()
		return u
	}
	key := entryKey{manager, string(metav1.ManagedFieldsOperationApply), ""}
	beforeEntries, _ := managedfields.Entries(base)
	afterEntries, _ := managedfields.Entries(upgraded)
	before, upg := entrySets(beforeEntries), entrySets(afterEntries)
	mine, others := upg[key], fieldpath.NewSet()
	if mine == nil {
		mine = fieldpath.NewSet()
	}
	moved := fieldpath.NewSet()
	for k, s := range before {
		if names.Has(k.manager) && k.op == string(metav1.ManagedFieldsOperationUpdate) {
			moved = moved.Union(s)
		}
	}
	u.Moved = paths(moved.Leaves())
	for k, s := range upg {
		if k != key {
			others = others.Union(s)
		}
	}
	if manager == KubectlApplyManager {
		others.Insert(lastAppliedPath)
	}
	u.Deleted = upgradeDeletes(tc, live, config, mine, others)
	u.Advice = csaAdvice(u, manager)
	return u
}

// upgradeDeletes are the fields of mine (the applier's after the
// upgrade) that the apply after the upgrade deletes: owned by no other
// manager, not in config, and set by the last client-side apply (the
// annotation too, when released), and no map or list that keeps a field.
func upgradeDeletes(tc managedfields.TypeConverter, live, config *unstructured.Unstructured, mine, others *fieldpath.Set) []string {
	conf := fieldSet(tc, config)
	original, err := configObject([]byte(live.GetAnnotations()[LastAppliedAnnotation]))
	if err != nil || original == nil || conf == nil {
		return nil
	}
	orig := fieldSet(tc, original)
	if orig == nil {
		return nil
	}
	orig.Insert(lastAppliedPath)
	keep := others.Union(conf)
	kept := map[string]bool{}
	keep.Iterate(func(p fieldpath.Path) {
		for i := 1; i < len(p); i++ {
			kept[p[:i].String()] = true
		}
	})
	var out []string
	mine.Difference(keep).Leaves().Iterate(func(p fieldpath.Path) {
		if orig.Has(p) && !kept[p.String()] {
			out = append(out, p.String())
		}
	})
	sort.Strings(out)
	return out
}

func csaAdvice(u *CSAUpgrade, manager string) string {
	who := strings.Join(u.Managers, ", ")
	then := fmt.Sprintf("kubectl apply --server-side then moves %s's fields to %q (csaupgrade) and applies again, deleting the fields that left the manifest", who, manager)
	switch {
	case len(u.Conflicts) > 0 && manager == KubectlApplyManager:
		return "these fields changed since the last client-side apply (their live value is not the annotation's), so the API server does not force them for kubectl as it does the others: --force-conflicts takes them; " + then
	case len(u.Conflicts) > 0:
		return fmt.Sprintf("the API server forgives conflicts with client-side apply only to the field manager %q, on the fields the annotation holds at their live value: apply with kubectl apply --server-side's default manager, or --force-conflicts, or upgrade the managedFields first (k8s.io/client-go/util/csaupgrade, which kubectl runs after an apply succeeds)", KubectlApplyManager)
	}
	return then + fmt.Sprintf("; a tool that does not upgrade leaves them with %s, which keeps them when they leave the manifest and conflicts on later changes to them", who)
}
