package writepath

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The write path cannot run the API server's defaulting yet (the
// defaulting functions live in k8s.io/kubernetes, not in a library), yet
// a manifest from git omits every defaulted field and the server fills
// them back before the field manager compares old and new. Without them
// every PUT or generated patch would seem to remove (clobber) the
// defaulted fields the creator owns. BuiltinDefaults fills in the
// defaults of the workload kinds and their pod templates, the fields that
// matter in practice; other kinds are left as they are (a documented
// limit of predict --offline). The simulator does not use them: its
// objects are what the scenario declares.

// defaultPodSpec is SetDefaults_PodSpec and SetDefaults_Container.
func defaultPodSpec(spec map[string]any) {
	setDefault(spec, "dnsPolicy", "ClusterFirst")
	setDefault(spec, "restartPolicy", "Always")
	setDefault(spec, "schedulerName", "default-scheduler")
	setDefault(spec, "securityContext", map[string]any{})
	setDefault(spec, "terminationGracePeriodSeconds", int64(30))
	for _, key := range []string{"containers", "initContainers"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			setDefault(cm, "terminationMessagePath", "/dev/termination-log")
			setDefault(cm, "terminationMessagePolicy", "File")
			setDefault(cm, "resources", map[string]any{})
			if img, ok := cm["image"].(string); ok {
				setDefault(cm, "imagePullPolicy", pullPolicy(img))
			}
			ports, _ := cm["ports"].([]any)
			for _, p := range ports {
				if pm, ok := p.(map[string]any); ok {
					setDefault(pm, "protocol", "TCP")
				}
			}
		}
	}
}

// pullPolicy is the default imagePullPolicy: Always for :latest or no
// tag, else IfNotPresent.
func pullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag = name[i+1:]
	}
	if tag == "" || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

func setDefault(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}

// BuiltinDefaults fills the defaults of obj's kind (gvk) in place.
func BuiltinDefaults(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return
	}
	template := func() {
		// The pod spec is defaulted on a copy that then takes its place:
		// one copy, not a second one to set it back.
		if ts, found, _ := unstructured.NestedMap(spec, "template", "spec"); found {
			defaultPodSpec(ts)
			spec["template"].(map[string]any)["spec"] = ts
		}
	}
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		defaultPodSpec(spec)
	case gvk.Group == "apps" && gvk.Kind == "Deployment":
		setDefault(spec, "replicas", int64(1))
		setDefault(spec, "revisionHistoryLimit", int64(10))
		setDefault(spec, "progressDeadlineSeconds", int64(600))
		st, _ := spec["strategy"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			spec["strategy"] = st
		}
		setDefault(st, "type", "RollingUpdate")
		if st["type"] == "RollingUpdate" {
			ru, _ := st["rollingUpdate"].(map[string]any)
			if ru == nil {
				ru = map[string]any{}
				st["rollingUpdate"] = ru
			}
			setDefault(ru, "maxUnavailable", "25%")
			setDefault(ru, "maxSurge", "25%")
		}
		template()
	case gvk.Group == "apps" && gvk.Kind == "ReplicaSet":
		setDefault(spec, "replicas", int64(1))
		template()
	case gvk.Group == "apps" && (gvk.Kind == "StatefulSet" || gvk.Kind == "DaemonSet"):
		setDefault(spec, "revisionHistoryLimit", int64(10))
		if gvk.Kind == "StatefulSet" {
			setDefault(spec, "replicas", int64(1))
			setDefault(spec, "podManagementPolicy", "OrderedReady")
		}
		template()
	}
}

// BuiltinValidate runs the few validations the write path knows: every
// container of a pod template has a name and an image, and no two ports
// of a container have the same name. It returns what the server would
// refuse with 422, or nil.
func BuiltinValidate(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) field.ErrorList {
	var specPath []string
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		specPath = []string{"spec"}
	case gvk.Group == "apps" && (gvk.Kind == "Deployment" || gvk.Kind == "ReplicaSet" || gvk.Kind == "StatefulSet" || gvk.Kind == "DaemonSet"):
		specPath = []string{"spec", "template", "spec"}
	default:
		return nil
	}
	cs, _, _ := unstructured.NestedSlice(obj.Object, append(specPath, "containers")...)
	for i, c := range cs {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, f := range []string{"name", "image"} {
			if v, _ := cm[f].(string); v == "" {
				msg := fmt.Sprintf("%s.containers[%d].%s: Required value", strings.Join(specPath, "."), i, f)
				return field.ErrorList{field.Invalid(nil, nil, msg)}
			}
		}
		if errs := validatePortNames(cm, field.NewPath(specPath[0], specPath[1:]...).Child("containers").Index(i)); len(errs) > 0 {
			return errs
		}
	}
	return nil
}

// validatePortNames is the name check of the API server's
// validateContainerPorts: a port's name, when set, is unique among the
// container's ports (the same number on TCP and UDP needs two names).
func validatePortNames(container map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ports, _ := container["ports"].([]any)
	seen := map[string]bool{}
	for j, p := range ports {
		pm, _ := p.(map[string]any)
		name, _ := pm["name"].(string)
		if name == "" {
			continue
		}
		if seen[name] {
			errs = append(errs, field.Duplicate(path.Child("ports").Index(j).Child("name"), name))
		}
		seen[name] = true
	}
	return errs
}
