package owners

import (
	"cmp"
	"slices"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// DriftConfig turns on the drift check: which fields of an object are owned
// by a manager other than the one expected to own it all.
type DriftConfig struct {
	// ExpectedManager is the manager that should own every field; empty
	// infers it per object: the Apply manager owning the most leaves.
	ExpectedManager string
	// IncludeStatus counts the fields written through the status
	// subresource as drift too. Left out by default: controllers report
	// an object's state there (a Deployment's .status is
	// kube-controller-manager's on every cluster), which is no drift from
	// the manager expected to own the object's spec.
	IncludeStatus bool
	// IncludeScale counts the fields written through the scale subresource
	// (.spec.replicas by a HorizontalPodAutoscaler or kubectl scale) as
	// drift too. Left out by default: every autoscaled object has it.
	IncludeScale bool
}

// Drift is one object's drift from its expected manager.
type Drift struct {
	// Expected is the expected manager: the one configured, or the inferred
	// main applier; empty when none could be inferred (no Apply entry).
	Expected string
	// Inferred is true when Expected was inferred.
	Inferred bool
	// ExpectedLeaves is how many owned leaves of the whole object (before
	// any filter) Expected owns: for an inferred manager, what it was
	// chosen on.
	ExpectedLeaves int
	// Leaves is how many owned leaves the whole object has.
	Leaves int
	// Fields are the owned leaves with an owner other than Expected, in
	// tree order: a map or struct owned as a whole (kubectl create owns
	// .data of a ConfigMap so) is its leaves, as everywhere in owners.
	Fields []DriftField
	// StatusFields is how many fields only managers writing through the
	// status subresource own besides Expected: left out of Fields unless
	// DriftConfig.IncludeStatus is set (then 0).
	StatusFields int
	// ScaleFields is the same for the scale subresource (unless
	// DriftConfig.IncludeScale). A field that writers of both own counts
	// as a status field.
	ScaleFields int
}

// DriftField is a field owned by a manager other than the expected one.
type DriftField struct {
	Node *managedfields.Node
	// Others are the field's owners other than the expected manager: their
	// Subresource says when they wrote it through /scale or /status.
	Others []managedfields.Owner
	// Shared is true when the expected manager owns the field too.
	Shared bool
}

// drift finds o's fields owned by managers other than cfg's expected one,
// within the filtered ownership.
func drift(o *Object, cfg DriftConfig) *Drift {
	d := &Drift{Expected: cfg.ExpectedManager}
	if d.Expected == "" {
		d.Expected, d.ExpectedLeaves = mainApplier(o.Decoded)
		d.Inferred = true
		if d.Expected == "" {
			return d
		}
	}
	d.ExpectedLeaves, d.Leaves = 0, 0
	o.Decoded.Root().Walk(func(n *managedfields.Node) bool {
		if len(n.Children) == 0 && n.Owned() {
			d.Leaves++
			if ownedBy(n, d.Expected) {
				d.ExpectedLeaves++
			}
		}
		return true
	})
	o.Ownership.Root().Walk(func(n *managedfields.Node) bool {
		if len(n.Children) == 0 && n.Owned() {
			d.addField(n, cfg)
		}
		return true
	})
	return d
}

// addField adds leaf n to d's fields when a manager other than the
// expected one owns it, or counts it as left out when those owners all
// wrote through a subresource cfg leaves out.
func (d *Drift) addField(n *managedfields.Node, cfg DriftConfig) {
	f := DriftField{Node: n}
	status, scale := false, false
	for _, ow := range n.Owners {
		switch {
		case ow.Manager == d.Expected:
			f.Shared = true
		case ow.Subresource == "status" && !cfg.IncludeStatus:
			status = true
		case ow.Subresource == "scale" && !cfg.IncludeScale:
			scale = true
		default:
			f.Others = append(f.Others, ow)
		}
	}
	switch {
	case len(f.Others) > 0:
		d.Fields = append(d.Fields, f)
	case status:
		d.StatusFields++
	case scale:
		d.ScaleFields++
	}
}

func ownedBy(n *managedfields.Node, manager string) bool {
	for _, ow := range n.Owners {
		if ow.Manager == manager {
			return true
		}
	}
	return false
}

// mainApplier is the Apply manager owning the most leaves of the whole
// object (ties go to the manager whose name sorts first), and how many it
// owns; empty when no entry is an Apply.
func mainApplier(own *managedfields.Ownership) (string, int) {
	leaves := map[string]int{}
	for _, e := range own.Entries() {
		if e.IsApply() {
			leaves[e.Manager] += 0
		}
	}
	if len(leaves) == 0 {
		return "", 0
	}
	own.Root().Walk(func(n *managedfields.Node) bool {
		if len(n.Children) > 0 {
			return true
		}
		seen := map[string]bool{}
		for _, ow := range n.Owners {
			if ow.IsApply() && !seen[ow.Manager] {
				seen[ow.Manager] = true
				leaves[ow.Manager]++
			}
		}
		return true
	})
	names := make([]string, 0, len(leaves))
	for m := range leaves {
		names = append(names, m)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(leaves[b], leaves[a]), cmp.Compare(a, b))
	})
	return names[0], leaves[names[0]]
}
