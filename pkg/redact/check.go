package redact

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Guarded is printable content that may carry Secret values (a report of
// results, some of them Secrets) and can say whether each went through a
// Redactor, usually by calling Stamp.Require on the Stamps it holds.
type Guarded interface {
	CheckSecrets() error
}

// Check is the printing layer's guard. It returns an error wrapping
// ErrNotRedacted when v is a raw Secret (an unstructured object or list,
// its content as a map, or a typed Secret) or Guarded content whose
// CheckSecrets fails; a raw object has no Stamp, so a Secret can only be
// printed inside Guarded content. Other values pass: Check does not walk
// them.
func Check(v any) error {
	switch t := v.(type) {
	case Guarded:
		return t.CheckSecrets()
	case *unstructured.Unstructured:
		if t != nil && IsSecret(t.Object) {
			return rawSecret(t.GetNamespace(), t.GetName())
		}
	case unstructured.Unstructured:
		return Check(&t)
	case *unstructured.UnstructuredList:
		for i := range t.Items {
			if err := Check(&t.Items[i]); err != nil {
				return err
			}
		}
	case map[string]any:
		return Check(&unstructured.Unstructured{Object: t})
	case *corev1.Secret:
		return rawSecret(t.Namespace, t.Name)
	case corev1.Secret:
		return rawSecret(t.Namespace, t.Name)
	case *corev1.SecretList:
		if len(t.Items) > 0 {
			return rawSecret(t.Items[0].Namespace, t.Items[0].Name)
		}
	}
	return nil
}

func rawSecret(ns, name string) error {
	if ns != "" {
		name = ns + "/" + name
	}
	return Stamp{}.Require("Secret " + name)
}
