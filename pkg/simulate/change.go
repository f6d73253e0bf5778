package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// This file turns a writer's read into its write request in two steps:
// computeChange applies the actor's change to the object read, and encode
// sends the result the way the actor's method does (an update, a merge,
// strategic or JSON patch, or an apply configuration).

// writeReq is one prepared write.
type writeReq struct {
	// verb names the request in the trace (PUT, PATCH json, APPLY, ...).
	verb string
	// obj is the object of an update; pt and patch those of a patch.
	obj   *unstructured.Unstructured
	pt    types.PatchType
	patch []byte
	// sentRV is the resourceVersion the request carries as a precondition.
	sentRV string
	// note explains the write in the trace.
	note string
	// carries says whether the write carries the counter's value from the
	// read.
	carries bool
}

// change is the actor's change applied to the object read.
type change struct {
	// obj is the object read, changed copy-on-write; rv is its
	// resourceVersion as read.
	obj *unstructured.Unstructured
	rv  string
	// oldVal and newVal are the value at the path before and after.
	oldVal, newVal any
	// note describes the change in the trace.
	note string
}

// buildWrite computes the change from the object read and encodes it the
// way the actor's method sends it.
func (w *writer) buildWrite() (writeReq, error) {
	c, err := w.computeChange()
	if err != nil {
		return writeReq{}, err
	}
	return w.encode(c)
}

// value returns the value a set or insert writes next.
func (w *writer) value() any {
	vs := w.group.values
	if len(vs) == 0 {
		return nil
	}
	return vs[w.writes%len(vs)]
}

// computeChange applies the actor's change (increment, set or insert) to
// the object read. The writer owns the top of what it read (GetShared): it
// changes it copy-on-write with managedfields.SetPath and hands it to the
// server (see apiserver.Server.Update), reading old values first.
func (w *writer) computeChange() (change, error) {
	c := w.group.spec.Change
	path := w.group.path
	ch := change{obj: w.read, rv: w.read.GetResourceVersion()}
	ch.oldVal, _ = managedfields.GetPath(w.read.Object, path)
	if c.Insert != "" || w.group.spec.Write() == writepath.JSONPatchTest {
		// Old lists and values are still needed after the change.
		ch.oldVal = runtime.DeepCopyJSONValue(ch.oldVal)
	}
	var err error
	switch {
	case c.Increment != "":
		err = w.increment(&ch)
	case c.Set != "":
		ch.newVal = w.value()
		if w.eng.trace {
			ch.note = fmt.Sprintf("%s = %v", c.Set, display(ch.newVal))
		}
	case c.Insert != "":
		err = w.insert(&ch)
	}
	if err != nil {
		return change{}, err
	}
	if err := managedfields.SetPath(ch.obj.Object, path, ch.newVal); err != nil {
		return change{}, err
	}
	return ch, nil
}

// increment adds one to an integer (or a string holding one, as in a
// ConfigMap).
func (w *writer) increment(ch *change) error {
	c := w.group.spec.Change
	n, err := asInt(ch.oldVal)
	if err != nil {
		return fmt.Errorf("increment %s: %v", c.Increment, err)
	}
	if _, isStr := ch.oldVal.(string); isStr {
		ch.newVal = strconv.FormatInt(n+1, 10)
	} else {
		ch.newVal = n + 1
	}
	if w.eng.trace {
		ch.note = fmt.Sprintf("%s %v -> %v", c.Increment, display(ch.oldVal), display(ch.newVal))
	}
	return nil
}

// insert puts the next value into the list at change.at.
func (w *writer) insert(ch *change) error {
	c := w.group.spec.Change
	list, _ := ch.oldVal.([]any)
	if c.At > len(list) {
		return fmt.Errorf("insert at %d: %s has %d items", c.At, c.Insert, len(list))
	}
	item := w.value()
	if m, ok := item.(map[string]any); ok {
		// Inserted items get a unique name, so list-map keys stay unique.
		if n, ok := m["name"].(string); ok {
			m = runtime.DeepCopyJSON(m)
			m["name"] = fmt.Sprintf("%s-%d", n, w.writes+1)
			item = m
		}
	}
	ch.newVal = append(append(append([]any{}, list[:c.At]...), item), list[c.At:]...)
	if w.eng.trace {
		ch.note = fmt.Sprintf("insert into %s at %d", c.Insert, c.At)
	}
	return nil
}

// encode sends the change the way the actor's method does.
func (w *writer) encode(ch change) (writeReq, error) {
	switch m := w.group.spec.Write(); m {
	case writepath.Update, writepath.UpdateStatus:
		verb := "PUT"
		if m == writepath.UpdateStatus {
			verb = "PUT /status"
		}
		return writeReq{verb: verb, obj: ch.obj, sentRV: ch.rv, note: ch.note, carries: true}, nil
	case writepath.UpdateNoRV:
		ch.obj.SetResourceVersion("")
		return writeReq{verb: "PUT", obj: ch.obj, note: joinNote(ch.note, "no resourceVersion: last write wins"), carries: true}, nil
	case writepath.MergePatch, writepath.MergePatchRV, writepath.StrategicMergePatch:
		return w.encodeMergePatch(ch)
	case writepath.JSONPatch, writepath.JSONPatchTest:
		return w.encodeJSONPatch(ch)
	case writepath.Apply, writepath.ApplyForce:
		return w.encodeApply(ch)
	case writepath.ClientApply:
		return w.encodeClientApply(ch)
	default:
		return writeReq{}, fmt.Errorf("method %q writes nothing", w.group.spec.Method)
	}
}

// encodeMergePatch sends the changed field alone, as a merge or strategic
// merge patch; merge-patch-rv adds the resourceVersion read, as
// controller-runtime's MergeFromWithOptimisticLock does.
func (w *writer) encodeMergePatch(ch change) (writeReq, error) {
	m := w.group.spec.Write()
	p := nest(ch.obj.Object, w.group.path)
	req := writeReq{verb: "PATCH merge", pt: types.MergePatchType, note: ch.note, carries: true}
	if m == writepath.StrategicMergePatch {
		req.verb, req.pt = "PATCH strategic", types.StrategicMergePatchType
	}
	if m == writepath.MergePatchRV {
		md, _ := p["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			p["metadata"] = md
		}
		md["resourceVersion"] = ch.rv
		req.sentRV = ch.rv
	}
	b, err := json.Marshal(p)
	req.patch = b
	return req, err
}

// encodeJSONPatch sends an add or replace op at the path's JSON pointer,
// after a test op for json-patch-test (change.test, or the old value).
func (w *writer) encodeJSONPatch(ch change) (writeReq, error) {
	c := w.group.spec.Change
	ptr := pointer(w.group.path)
	var ops []map[string]any
	if w.group.spec.Write() == writepath.JSONPatchTest {
		if g := c.Test; g != nil {
			tp, _ := scenario.ParsePath(g.Path)
			tv, err := normalizeValue(g.Value)
			if err != nil {
				return writeReq{}, err
			}
			ops = append(ops, map[string]any{"op": "test", "path": pointer(tp), "value": tv})
		} else {
			ops = append(ops, map[string]any{"op": "test", "path": ptr, "value": ch.oldVal})
		}
	}
	switch {
	case c.Insert != "":
		ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("%s/%d", ptr, c.At), "value": ch.newVal.([]any)[c.At]})
	case ch.oldVal == nil:
		ops = append(ops, map[string]any{"op": "add", "path": ptr, "value": ch.newVal})
	default:
		ops = append(ops, map[string]any{"op": "replace", "path": ptr, "value": ch.newVal})
	}
	b, err := json.Marshal(ops)
	note := ch.note
	if w.eng.trace {
		note = joinNote(note, "at "+ptr)
	}
	return writeReq{verb: "PATCH json", pt: types.JSONPatchType, patch: b, note: note, carries: true}, err
}

// encodeApply sends an apply configuration holding the changed field only:
// the field the actor owns.
func (w *writer) encodeApply(ch change) (writeReq, error) {
	b, err := json.Marshal(w.manifest(ch))
	verb := "APPLY"
	if w.group.spec.Write() == writepath.ApplyForce {
		verb = "APPLY force"
	}
	return writeReq{verb: verb, pt: types.ApplyPatchType, patch: b, note: ch.note, carries: true}, err
}

// manifest is the object holding the changed field only: the field the
// actor owns (an apply configuration, a client-side apply's manifest).
func (w *writer) manifest(ch change) map[string]any {
	t := w.group.target
	m := nest(ch.obj.Object, w.group.path)
	m["apiVersion"] = t.gvk.GroupVersion().String()
	m["kind"] = t.gvk.Kind
	md := map[string]any{"name": t.name}
	if t.namespace != "" {
		md["namespace"] = t.namespace
	}
	m["metadata"] = md
	return m
}

// encodeClientApply sends what kubectl apply (client side) sends for a
// manifest holding the changed field only: the three-way patch of the
// last-applied annotation (the actor's previous manifest), the manifest
// and the object read (writepath.ClientApplyPatch), without
// resourceVersion. It overwrites what others changed in its fields, and
// deletes the fields its previous manifests set that this one does not.
func (w *writer) encodeClientApply(ch change) (writeReq, error) {
	manifest := w.manifest(ch)
	// The object read is ch.obj with the path's old value: the change was
	// made on the writer's own top of it.
	read := &unstructured.Unstructured{Object: maps.Clone(ch.obj.Object)}
	if err := managedfields.SetPath(read.Object, w.group.path, ch.oldVal); err != nil {
		return writeReq{}, err
	}
	car, err := writepath.ClientApplyPatch(read, &unstructured.Unstructured{Object: manifest})
	if err != nil {
		return writeReq{}, err
	}
	note := ch.note
	if car.Original == nil {
		note = joinNote(note, "no last-applied annotation: kubectl warns and adds it")
	}
	if string(car.Patch) == "{}" {
		// kubectl would send nothing; the simulated client sends the empty
		// patch, a no-op.
		note = joinNote(note, "the three-way patch is empty: kubectl would send nothing")
	}
	verb := "PATCH client-apply"
	if car.PatchType == types.MergePatchType {
		verb += " (merge)"
	}
	return writeReq{verb: verb, pt: car.PatchType, patch: car.Patch, note: note, carries: true}, nil
}

// nest builds the merge patch {a: {b: v}} of a field path from the changed
// object; a path through a list sends the whole list (merge patch has no
// index).
func nest(obj map[string]any, path fieldpath.Path) map[string]any {
	out := map[string]any{}
	cur := out
	for i, pe := range path {
		if i == len(path)-1 || path[i+1].FieldName == nil {
			v, _ := managedfields.GetPath(obj, path[:i+1])
			cur[*pe.FieldName] = v
			return out
		}
		m := map[string]any{}
		cur[*pe.FieldName] = m
		cur = m
	}
	return out
}

// pointer returns the RFC 6901 JSON pointer of a path. (Validation keeps
// key and value selectors out of JSON patch paths.)
func pointer(path fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range path {
		b.WriteByte('/')
		if pe.Index != nil {
			b.WriteString(strconv.Itoa(*pe.Index))
			continue
		}
		b.WriteString(pointerEscaper.Replace(*pe.FieldName))
	}
	return b.String()
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// checkChange refuses, before the run, a change that cannot apply to the
// target's kind: it applies the actor's first change to the target as it
// is at the start and types the result with the kind's schema. Without it
// an increment of data.nope on a ConfigMap writes the integer 1 into
// string data and every write of the run fails with a 500.
//
// Only built-in kinds have a schema to check against; a change that
// cannot be computed yet (a target created later, a list another actor
// grows) is left to the run.
func (e *engine) checkChange(ctx context.Context, g *group) error {
	if g.path == nil || g.spec.Write() == "" || !managedfields.IsBuiltin(g.target.gvk) {
		return nil
	}
	u, err := e.srv.Get(ctx, g.target.gvk, g.target.namespace, g.target.name)
	if err != nil {
		return nil
	}
	w := newWriter(client{eng: e, group: g})
	w.read = u
	ch, err := w.computeChange()
	if err != nil {
		return nil
	}
	if _, err := managedfields.BuiltinTypeConverter().ObjectToTyped(ch.obj); err != nil {
		return fmt.Errorf("change %s would write %s, which a %s cannot hold: %s", g.pathText, display(ch.newVal), g.target.gvk.Kind, schemaReason(err))
	}
	return nil
}

// schemaReason shortens a schema error to what the schema wanted: SMD's
// errors end with ", got &value.valueUnstructured{...}", a Go value dump.
func schemaReason(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ", got &value."); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
