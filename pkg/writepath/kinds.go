package writepath

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// serverKinds are the kinds whose defaulting and validation run on the API
// server's code, each with the validation its registry strategies call
// (k8s.io/kubernetes/pkg/registry/...): Validate on create, ValidateUpdate
// on update, the status strategy's ValidateUpdate on /status.
var serverKinds = map[schema.GroupVersionKind]serverKind{
	{Version: "v1", Kind: "ConfigMap"}: {validate: func(obj, old runtime.Object, _ string) field.ErrorList {
		if old == nil {
			return corevalidation.ValidateConfigMap(obj.(*core.ConfigMap))
		}
		return corevalidation.ValidateConfigMapUpdate(obj.(*core.ConfigMap), old.(*core.ConfigMap))
	}},
	{Version: "v1", Kind: "Secret"}: {validate: func(obj, old runtime.Object, _ string) field.ErrorList {
		if old == nil {
			return corevalidation.ValidateSecret(obj.(*core.Secret))
		}
		return corevalidation.ValidateSecretUpdate(obj.(*core.Secret), old.(*core.Secret))
	}},
	{Version: "v1", Kind: "Service"}: {validate: validateService, prepare: prepareService},
	{Version: "v1", Kind: "Pod"}:     {validate: validatePod},
	{Group: "apps", Version: "v1", Kind: "Deployment"}: {validate: func(obj, old runtime.Object, sub string) field.ErrorList {
		d := obj.(*apps.Deployment)
		if old == nil {
			return appsvalidation.ValidateDeployment(d, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, nil))
		}
		o := old.(*apps.Deployment)
		if sub == "status" {
			return appsvalidation.ValidateDeploymentStatusUpdate(d, o)
		}
		return appsvalidation.ValidateDeploymentUpdate(d, o, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, &o.Spec.Template))
	}},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: {validate: func(obj, old runtime.Object, sub string) field.ErrorList {
		r := obj.(*apps.ReplicaSet)
		if old == nil {
			return appsvalidation.ValidateReplicaSet(r, podutil.GetValidationOptionsFromPodTemplate(&r.Spec.Template, nil))
		}
		o := old.(*apps.ReplicaSet)
		if sub == "status" {
			return appsvalidation.ValidateReplicaSetStatusUpdate(r, o)
		}
		return appsvalidation.ValidateReplicaSetUpdate(r, o, podutil.GetValidationOptionsFromPodTemplate(&r.Spec.Template, &o.Spec.Template))
	}},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: {validate: func(obj, old runtime.Object, sub string) field.ErrorList {
		s := obj.(*apps.StatefulSet)
		if old == nil {
			return appsvalidation.ValidateStatefulSet(s, podutil.GetValidationOptionsFromPodTemplate(&s.Spec.Template, nil))
		}
		o := old.(*apps.StatefulSet)
		if sub == "status" {
			return appsvalidation.ValidateStatefulSetStatusUpdate(s, o)
		}
		return appsvalidation.ValidateStatefulSetUpdate(s, o, podutil.GetValidationOptionsFromPodTemplate(&s.Spec.Template, &o.Spec.Template))
	}},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: {validate: func(obj, old runtime.Object, sub string) field.ErrorList {
		d := obj.(*apps.DaemonSet)
		if old == nil {
			return appsvalidation.ValidateDaemonSet(d, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, nil))
		}
		o := old.(*apps.DaemonSet)
		if sub == "status" {
			return appsvalidation.ValidateDaemonSetStatusUpdate(d, o)
		}
		return appsvalidation.ValidateDaemonSetUpdate(d, o, podutil.GetValidationOptionsFromPodTemplate(&d.Spec.Template, &o.Spec.Template))
	}},
}

// validatePod is the pod strategies' validation.
func validatePod(obj, old runtime.Object, sub string) field.ErrorList {
	p := obj.(*core.Pod)
	if old == nil {
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, nil, &p.ObjectMeta, nil)
		opts.ResourceIsPod = true
		return corevalidation.ValidatePodCreate(p, opts)
	}
	o := old.(*core.Pod)
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&p.Spec, &o.Spec, &p.ObjectMeta, &o.ObjectMeta)
	opts.ResourceIsPod = true
	if sub == "status" {
		return corevalidation.ValidatePodStatusUpdate(p, o, opts)
	}
	return corevalidation.ValidatePodUpdate(p, o, opts)
}

// validateService is the service strategies' validation.
func validateService(obj, old runtime.Object, sub string) field.ErrorList {
	s := obj.(*core.Service)
	if old == nil {
		return corevalidation.ValidateServiceCreate(s)
	}
	o := old.(*core.Service)
	if sub == "status" {
		return corevalidation.ValidateServiceStatusUpdate(s, o)
	}
	return corevalidation.ValidateServiceUpdate(s, o)
}
