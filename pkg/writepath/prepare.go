package writepath

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// prepareCreate is the registry's BeforeCreate: a new uid and
// creationTimestamp (when the Writer makes them), generation 1 for kinds
// that track it, and no status where only /status may write it.
func (w *Writer) prepareCreate(t *Type, obj *unstructured.Unstructured) {
	if w.NewUID != nil {
		obj.SetUID(w.NewUID())
	}
	if w.Now != nil {
		obj.SetCreationTimestamp(metav1.NewTime(w.Now()))
	}
	obj.SetResourceVersion("")
	if t.Generation != GenerationNone {
		obj.SetGeneration(1)
	} else {
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
	}
	if t.StatusSubresource {
		unstructured.RemoveNestedField(obj.Object, "status")
	}
}

// prepareUpdate is the registry's BeforeUpdate with the strategy's
// PrepareForUpdate, on obj (changed in place) over the stored old: uid
// and creationTimestamp come from old, /status writes take only .status
// (and managedFields) from the request, main-resource writes keep old's
// status where a status subresource exists, and generation follows the
// kind's rule. The caller fills in the kind's defaults first, so that
// generation is judged on them. old is not modified.
func prepareUpdate(t *Type, old, obj *unstructured.Unstructured, sub string) {
	md, _ := obj.Object["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj.Object["metadata"] = md
	}
	// Stored values are copied as they are: no parsing and formatting on
	// the simulator's hot path.
	om, _ := old.Object["metadata"].(map[string]any)
	if uid, _ := md["uid"].(string); uid == "" {
		if v, ok := om["uid"]; ok {
			md["uid"] = v
		}
	}
	if v, ok := om["creationTimestamp"]; ok && v != nil {
		md["creationTimestamp"] = v
	}
	if sub == "status" {
		// The status strategy takes only .status from the request.
		fresh := runtime.DeepCopyJSON(old.Object)
		if st, ok := obj.Object["status"]; ok {
			fresh["status"] = st
		} else {
			delete(fresh, "status")
		}
		if mf, ok := md["managedFields"]; ok {
			fresh["metadata"].(map[string]any)["managedFields"] = mf
		}
		fresh["metadata"].(map[string]any)["resourceVersion"] = md["resourceVersion"]
		obj.Object = fresh
		return
	}
	if t.StatusSubresource {
		if st, ok := old.Object["status"]; ok {
			obj.Object["status"] = runtime.DeepCopyJSONValue(st)
		} else {
			delete(obj.Object, "status")
		}
	}
	setGeneration(t, old, obj)
}

// setGeneration carries old's generation over to obj, bumped when the
// change is one the kind's rule counts.
func setGeneration(t *Type, old, obj *unstructured.Unstructured) {
	if t.Generation == GenerationNone {
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
		return
	}
	gen := old.GetGeneration()
	if bumpsGeneration(t, old.Object, obj.Object) {
		gen++
	}
	obj.SetGeneration(gen)
}

// bumpsGeneration tells whether a write from old to obj bumps
// metadata.generation. Values compare as the strategies compare them
// (equality.Semantic: an empty map or list equals an absent one).
func bumpsGeneration(t *Type, old, obj map[string]any) bool {
	eq := equality.Semantic.DeepEqual
	switch t.Generation {
	case GenerationSpec:
		return !eq(old["spec"], obj["spec"])
	case GenerationSpecAndAnnotations:
		return !eq(old["spec"], obj["spec"]) || !eq(annotations(old), annotations(obj))
	case GenerationNonMetadata:
		for k, v := range obj {
			if !ignoredByGeneration(t, k) && !eq(old[k], v) {
				return true
			}
		}
		for k := range old {
			if _, ok := obj[k]; !ok && !ignoredByGeneration(t, k) {
				return true
			}
		}
	}
	return false
}

func ignoredByGeneration(t *Type, key string) bool {
	switch key {
	case "metadata", "apiVersion", "kind":
		return true
	case "status":
		return t.StatusSubresource
	}
	return false
}

func annotations(obj map[string]any) map[string]string {
	return (&unstructured.Unstructured{Object: obj}).GetAnnotations()
}
