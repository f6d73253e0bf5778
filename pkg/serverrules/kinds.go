package serverrules

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	k8sappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
)

// serverKinds are the kinds whose defaulting and validation run on the API
// server's code, each with the validation its registry strategies call
// (k8s.io/kubernetes/pkg/registry/...): Validate on create, ValidateUpdate
// on update, the status strategy's ValidateUpdate on /status.
var serverKinds = map[schema.GroupVersionKind]serverKind{
	{Version: "v1", Kind: "ConfigMap"}: serverKindOf(k8scorev1.SetObjectDefaults_ConfigMap, k8scorev1.Convert_v1_ConfigMap_To_core_ConfigMap,
		func(obj, old *core.ConfigMap, _ string) field.ErrorList {
			if old == nil {
				return corevalidation.ValidateConfigMap(obj)
			}
			return corevalidation.ValidateConfigMapUpdate(obj, old)
		}),
	{Version: "v1", Kind: "Secret"}: serverKindOf(k8scorev1.SetObjectDefaults_Secret, k8scorev1.Convert_v1_Secret_To_core_Secret,
		func(obj, old *core.Secret, _ string) field.ErrorList {
			if old == nil {
				return corevalidation.ValidateSecret(obj)
			}
			return corevalidation.ValidateSecretUpdate(obj, old)
		}),
	{Version: "v1", Kind: "Service"}: withPrepare(serverKindOf(k8scorev1.SetObjectDefaults_Service, k8scorev1.Convert_v1_Service_To_core_Service, validateService), prepareService),
	{Version: "v1", Kind: "Pod"}:     serverKindOf(k8scorev1.SetObjectDefaults_Pod, k8scorev1.Convert_v1_Pod_To_core_Pod, validatePod),
	{Group: "apps", Version: "v1", Kind: "Deployment"}: serverKindOf(k8sappsv1.SetObjectDefaults_Deployment, k8sappsv1.Convert_v1_Deployment_To_apps_Deployment,
		workload(appsvalidation.ValidateDeployment, appsvalidation.ValidateDeploymentUpdate, appsvalidation.ValidateDeploymentStatusUpdate,
			func(d *apps.Deployment) *core.PodTemplateSpec { return &d.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_ReplicaSet, k8sappsv1.Convert_v1_ReplicaSet_To_apps_ReplicaSet,
		workload(appsvalidation.ValidateReplicaSet, appsvalidation.ValidateReplicaSetUpdate, appsvalidation.ValidateReplicaSetStatusUpdate,
			func(r *apps.ReplicaSet) *core.PodTemplateSpec { return &r.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_StatefulSet, k8sappsv1.Convert_v1_StatefulSet_To_apps_StatefulSet,
		workload(appsvalidation.ValidateStatefulSet, appsvalidation.ValidateStatefulSetUpdate, appsvalidation.ValidateStatefulSetStatusUpdate,
			func(s *apps.StatefulSet) *core.PodTemplateSpec { return &s.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_DaemonSet, k8sappsv1.Convert_v1_DaemonSet_To_apps_DaemonSet,
		workload(appsvalidation.ValidateDaemonSet, appsvalidation.ValidateDaemonSetUpdate, appsvalidation.ValidateDaemonSetStatusUpdate,
			func(d *apps.DaemonSet) *core.PodTemplateSpec { return &d.Spec.Template })),
}

// workload is the validation of the strategies of an apps kind with a pod
// template: create and update take the pod validation options the
// template asks for (GetValidationOptionsFromPodTemplate), /status its
// own update.
func workload[T any](create func(*T, corevalidation.PodValidationOptions) field.ErrorList,
	update func(obj, old *T, opts corevalidation.PodValidationOptions) field.ErrorList,
	status func(obj, old *T) field.ErrorList, template func(*T) *core.PodTemplateSpec) func(obj, old *T, sub string) field.ErrorList {
	return func(obj, old *T, sub string) field.ErrorList {
		if old == nil {
			return create(obj, podutil.GetValidationOptionsFromPodTemplate(template(obj), nil))
		}
		if sub == "status" {
			return status(obj, old)
		}
		return update(obj, old, podutil.GetValidationOptionsFromPodTemplate(template(obj), template(old)))
	}
}

// withPrepare adds a Service's preparation to its serverKind.
func withPrepare(k serverKind, prepare func(obj, old *core.Service) error) serverKind {
	k.prepare = func(obj, old runtime.Object) error {
		var o *core.Service
		if old != nil {
			o = old.(*core.Service)
		}
		return prepare(obj.(*core.Service), o)
	}
	return k
}

// validatePod is the pod strategies' validation.
func validatePod(obj, old *core.Pod, sub string) field.ErrorList {
	if old == nil {
		opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&obj.Spec, nil, &obj.ObjectMeta, nil)
		opts.ResourceIsPod = true
		return corevalidation.ValidatePodCreate(obj, opts)
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&obj.Spec, &old.Spec, &obj.ObjectMeta, &old.ObjectMeta)
	opts.ResourceIsPod = true
	if sub == "status" {
		return corevalidation.ValidatePodStatusUpdate(obj, old, opts)
	}
	return corevalidation.ValidatePodUpdate(obj, old, opts)
}

// validateService is the service strategies' validation.
func validateService(obj, old *core.Service, sub string) field.ErrorList {
	if old == nil {
		return corevalidation.ValidateServiceCreate(obj)
	}
	if sub == "status" {
		return corevalidation.ValidateServiceStatusUpdate(obj, old)
	}
	return corevalidation.ValidateServiceUpdate(obj, old)
}
