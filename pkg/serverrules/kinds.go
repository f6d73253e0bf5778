package serverrules

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	k8sappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	k8sautoscalingv1 "k8s.io/kubernetes/pkg/apis/autoscaling/v1"
	k8sautoscalingv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	k8sbatchv1 "k8s.io/kubernetes/pkg/apis/batch/v1"
	k8scoordinationv1 "k8s.io/kubernetes/pkg/apis/coordination/v1"
	coordinationvalidation "k8s.io/kubernetes/pkg/apis/coordination/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	k8sdiscoveryv1 "k8s.io/kubernetes/pkg/apis/discovery/v1"
	discoveryvalidation "k8s.io/kubernetes/pkg/apis/discovery/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	k8snetworkingv1 "k8s.io/kubernetes/pkg/apis/networking/v1"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	k8snodev1 "k8s.io/kubernetes/pkg/apis/node/v1"
	nodevalidation "k8s.io/kubernetes/pkg/apis/node/validation"
	k8spolicyv1 "k8s.io/kubernetes/pkg/apis/policy/v1"
	"k8s.io/kubernetes/pkg/apis/rbac"
	k8srbacv1 "k8s.io/kubernetes/pkg/apis/rbac/v1"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
	k8sschedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	k8sstoragev1 "k8s.io/kubernetes/pkg/apis/storage/v1"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
)

// serverKinds are the kinds whose defaulting and validation run on the API
// server's code, each with the validation its registry strategies call
// (k8s.io/kubernetes/pkg/registry/<group>/<kind>/strategy.go): Validate
// on create, ValidateUpdate on update, the status strategy's
// ValidateUpdate on /status. A kind without a SetObjectDefaults function
// has no defaults (nil). Kinds left out, whose writes the offline engine
// cannot judge (predict's verdict unknown): Namespace (its strategies
// add a label and a finalizer to what is stored), Node, PersistentVolume, Event,
// ReplicationController (its strategies run declarative validation and
// check annotations of versions it cannot convert),
// CertificateSigningRequest (its requester is the writer),
// VolumeAttachment, CSINode, CSIStorageCapacity, the webhook
// configurations (their validation links the API server's webhook client
// and OpenTelemetry, a large share of the executable and its start-up),
// the admission policies (their strategies authorize the
// writer for the paramKind), flowcontrol and resource.k8s.io (their
// validation needs the request), and every beta or alpha version.
var serverKinds = map[schema.GroupVersionKind]serverKind{
	{Version: "v1", Kind: "ConfigMap"}: serverKindOf(k8scorev1.SetObjectDefaults_ConfigMap, k8scorev1.Convert_v1_ConfigMap_To_core_ConfigMap, k8scorev1.Convert_core_ConfigMap_To_v1_ConfigMap,
		plain(corevalidation.ValidateConfigMap, corevalidation.ValidateConfigMapUpdate)),
	{Version: "v1", Kind: "Secret"}: serverKindOf(k8scorev1.SetObjectDefaults_Secret, k8scorev1.Convert_v1_Secret_To_core_Secret, k8scorev1.Convert_core_Secret_To_v1_Secret,
		plain(corevalidation.ValidateSecret, corevalidation.ValidateSecretUpdate)),
	{Version: "v1", Kind: "Service"}: withPrepare(serverKindOf(k8scorev1.SetObjectDefaults_Service, k8scorev1.Convert_v1_Service_To_core_Service, k8scorev1.Convert_core_Service_To_v1_Service, validateService), prepareService),
	{Version: "v1", Kind: "Pod"}:     serverKindOf(k8scorev1.SetObjectDefaults_Pod, k8scorev1.Convert_v1_Pod_To_core_Pod, k8scorev1.Convert_core_Pod_To_v1_Pod, validatePod),
	{Version: "v1", Kind: "ServiceAccount"}: serverKindOf(nil, k8scorev1.Convert_v1_ServiceAccount_To_core_ServiceAccount, k8scorev1.Convert_core_ServiceAccount_To_v1_ServiceAccount,
		plain(corevalidation.ValidateServiceAccount, corevalidation.ValidateServiceAccountUpdate)),
	{Version: "v1", Kind: "LimitRange"}: serverKindOf(k8scorev1.SetObjectDefaults_LimitRange, k8scorev1.Convert_v1_LimitRange_To_core_LimitRange, k8scorev1.Convert_core_LimitRange_To_v1_LimitRange,
		plain(corevalidation.ValidateLimitRange, func(obj, _ *core.LimitRange) field.ErrorList { return corevalidation.ValidateLimitRange(obj) })),
	{Version: "v1", Kind: "ResourceQuota"}: serverKindOf(k8scorev1.SetObjectDefaults_ResourceQuota, k8scorev1.Convert_v1_ResourceQuota_To_core_ResourceQuota, k8scorev1.Convert_core_ResourceQuota_To_v1_ResourceQuota,
		withStatus(corevalidation.ValidateResourceQuota, corevalidation.ValidateResourceQuotaUpdate, corevalidation.ValidateResourceQuotaStatusUpdate)),
	{Version: "v1", Kind: "Endpoints"}: serverKindOf(k8scorev1.SetObjectDefaults_Endpoints, k8scorev1.Convert_v1_Endpoints_To_core_Endpoints, k8scorev1.Convert_core_Endpoints_To_v1_Endpoints,
		plain(corevalidation.ValidateEndpointsCreate, corevalidation.ValidateEndpointsUpdate)),
	{Version: "v1", Kind: "PersistentVolumeClaim"}: serverKindOf(k8scorev1.SetObjectDefaults_PersistentVolumeClaim, k8scorev1.Convert_v1_PersistentVolumeClaim_To_core_PersistentVolumeClaim, k8scorev1.Convert_core_PersistentVolumeClaim_To_v1_PersistentVolumeClaim, validatePVC),
	{Version: "v1", Kind: "PodTemplate"}: serverKindOf(k8scorev1.SetObjectDefaults_PodTemplate, k8scorev1.Convert_v1_PodTemplate_To_core_PodTemplate, k8scorev1.Convert_core_PodTemplate_To_v1_PodTemplate,
		workload(corevalidation.ValidatePodTemplate, corevalidation.ValidatePodTemplateUpdate, nil, func(t *core.PodTemplate) *core.PodTemplateSpec { return &t.Template })),
	{Group: "apps", Version: "v1", Kind: "Deployment"}: serverKindOf(k8sappsv1.SetObjectDefaults_Deployment, k8sappsv1.Convert_v1_Deployment_To_apps_Deployment, k8sappsv1.Convert_apps_Deployment_To_v1_Deployment,
		workload(appsvalidation.ValidateDeployment, appsvalidation.ValidateDeploymentUpdate, appsvalidation.ValidateDeploymentStatusUpdate,
			func(d *apps.Deployment) *core.PodTemplateSpec { return &d.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_ReplicaSet, k8sappsv1.Convert_v1_ReplicaSet_To_apps_ReplicaSet, k8sappsv1.Convert_apps_ReplicaSet_To_v1_ReplicaSet,
		workload(appsvalidation.ValidateReplicaSet, appsvalidation.ValidateReplicaSetUpdate, appsvalidation.ValidateReplicaSetStatusUpdate,
			func(r *apps.ReplicaSet) *core.PodTemplateSpec { return &r.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_StatefulSet, k8sappsv1.Convert_v1_StatefulSet_To_apps_StatefulSet, k8sappsv1.Convert_apps_StatefulSet_To_v1_StatefulSet,
		workload(appsvalidation.ValidateStatefulSet, appsvalidation.ValidateStatefulSetUpdate, appsvalidation.ValidateStatefulSetStatusUpdate,
			func(s *apps.StatefulSet) *core.PodTemplateSpec { return &s.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}: serverKindOf(k8sappsv1.SetObjectDefaults_DaemonSet, k8sappsv1.Convert_v1_DaemonSet_To_apps_DaemonSet, daemonSetToV1,
		workload(appsvalidation.ValidateDaemonSet, appsvalidation.ValidateDaemonSetUpdate, appsvalidation.ValidateDaemonSetStatusUpdate,
			func(d *apps.DaemonSet) *core.PodTemplateSpec { return &d.Spec.Template })),
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"}: serverKindOf(nil, k8sappsv1.Convert_v1_ControllerRevision_To_apps_ControllerRevision, k8sappsv1.Convert_apps_ControllerRevision_To_v1_ControllerRevision,
		plain(appsvalidation.ValidateControllerRevisionCreate, appsvalidation.ValidateControllerRevisionUpdate)),
	{Group: "batch", Version: "v1", Kind: "Job"}:     withPrepare(serverKindOf(k8sbatchv1.SetObjectDefaults_Job, k8sbatchv1.Convert_v1_Job_To_batch_Job, k8sbatchv1.Convert_batch_Job_To_v1_Job, validateJob), prepareJob),
	{Group: "batch", Version: "v1", Kind: "CronJob"}: serverKindOf(k8sbatchv1.SetObjectDefaults_CronJob, k8sbatchv1.Convert_v1_CronJob_To_batch_CronJob, k8sbatchv1.Convert_batch_CronJob_To_v1_CronJob, validateCronJob),
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}: serverKindOf(k8sautoscalingv2.SetObjectDefaults_HorizontalPodAutoscaler,
		k8sautoscalingv2.Convert_v2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler, k8sautoscalingv2.Convert_autoscaling_HorizontalPodAutoscaler_To_v2_HorizontalPodAutoscaler, validateHPA),
	{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"}: serverKindOf(k8sautoscalingv1.SetObjectDefaults_HorizontalPodAutoscaler,
		k8sautoscalingv1.Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler, k8sautoscalingv1.Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler, validateHPA),
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}: serverKindOf(nil, k8snetworkingv1.Convert_v1_Ingress_To_networking_Ingress, k8snetworkingv1.Convert_networking_Ingress_To_v1_Ingress,
		withStatus(networkingvalidation.ValidateIngressCreate, networkingvalidation.ValidateIngressUpdate, networkingvalidation.ValidateIngressStatusUpdate)),
	{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"}: serverKindOf(k8snetworkingv1.SetObjectDefaults_IngressClass, k8snetworkingv1.Convert_v1_IngressClass_To_networking_IngressClass, k8snetworkingv1.Convert_networking_IngressClass_To_v1_IngressClass,
		plain(networkingvalidation.ValidateIngressClass, networkingvalidation.ValidateIngressClassUpdate)),
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}: serverKindOf(k8snetworkingv1.SetObjectDefaults_NetworkPolicy, k8snetworkingv1.Convert_v1_NetworkPolicy_To_networking_NetworkPolicy, k8snetworkingv1.Convert_networking_NetworkPolicy_To_v1_NetworkPolicy,
		plain(func(np *networking.NetworkPolicy) field.ErrorList {
			return networkingvalidation.ValidateNetworkPolicy(np, networkingvalidation.ValidationOptionsForNetworking(np, nil))
		}, func(np, old *networking.NetworkPolicy) field.ErrorList {
			return networkingvalidation.ValidateNetworkPolicyUpdate(np, old, networkingvalidation.ValidationOptionsForNetworking(np, old))
		})),
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}: serverKindOf(nil, k8spolicyv1.Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget, k8spolicyv1.Convert_policy_PodDisruptionBudget_To_v1_PodDisruptionBudget, validatePDB),
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}: serverKindOf(nil, k8scoordinationv1.Convert_v1_Lease_To_coordination_Lease, k8scoordinationv1.Convert_coordination_Lease_To_v1_Lease,
		plain(coordinationvalidation.ValidateLease, coordinationvalidation.ValidateLeaseUpdate)),
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}: serverKindOf(nil, k8srbacv1.Convert_v1_Role_To_rbac_Role, k8srbacv1.Convert_rbac_Role_To_v1_Role,
		plain(rbacvalidation.ValidateRole, rbacvalidation.ValidateRoleUpdate)),
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}: serverKindOf(nil, k8srbacv1.Convert_v1_ClusterRole_To_rbac_ClusterRole, k8srbacv1.Convert_rbac_ClusterRole_To_v1_ClusterRole, validateClusterRole),
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}: serverKindOf(k8srbacv1.SetObjectDefaults_RoleBinding, k8srbacv1.Convert_v1_RoleBinding_To_rbac_RoleBinding, k8srbacv1.Convert_rbac_RoleBinding_To_v1_RoleBinding,
		plain(rbacvalidation.ValidateRoleBinding, rbacvalidation.ValidateRoleBindingUpdate)),
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}: serverKindOf(k8srbacv1.SetObjectDefaults_ClusterRoleBinding, k8srbacv1.Convert_v1_ClusterRoleBinding_To_rbac_ClusterRoleBinding, k8srbacv1.Convert_rbac_ClusterRoleBinding_To_v1_ClusterRoleBinding,
		plain(rbacvalidation.ValidateClusterRoleBinding, rbacvalidation.ValidateClusterRoleBindingUpdate)),
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}: serverKindOf(k8sstoragev1.SetObjectDefaults_StorageClass, k8sstoragev1.Convert_v1_StorageClass_To_storage_StorageClass, k8sstoragev1.Convert_storage_StorageClass_To_v1_StorageClass,
		revalidated(storagevalidation.ValidateStorageClass, storagevalidation.ValidateStorageClassUpdate)),
	{Group: "storage.k8s.io", Version: "v1", Kind: "CSIDriver"}: serverKindOf(k8sstoragev1.SetObjectDefaults_CSIDriver, k8sstoragev1.Convert_v1_CSIDriver_To_storage_CSIDriver, k8sstoragev1.Convert_storage_CSIDriver_To_v1_CSIDriver,
		plain(storagevalidation.ValidateCSIDriver, storagevalidation.ValidateCSIDriverUpdate)),
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}: serverKindOf(k8sschedulingv1.SetObjectDefaults_PriorityClass, k8sschedulingv1.Convert_v1_PriorityClass_To_scheduling_PriorityClass, k8sschedulingv1.Convert_scheduling_PriorityClass_To_v1_PriorityClass,
		plain(schedulingvalidation.ValidatePriorityClass, schedulingvalidation.ValidatePriorityClassUpdate)),
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}: serverKindOf(k8sdiscoveryv1.SetObjectDefaults_EndpointSlice, k8sdiscoveryv1.Convert_v1_EndpointSlice_To_discovery_EndpointSlice, k8sdiscoveryv1.Convert_discovery_EndpointSlice_To_v1_EndpointSlice,
		plain(discoveryvalidation.ValidateEndpointSliceCreate, discoveryvalidation.ValidateEndpointSliceUpdate)),
	{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}: serverKindOf(nil, k8snodev1.Convert_v1_RuntimeClass_To_node_RuntimeClass, k8snodev1.Convert_node_RuntimeClass_To_v1_RuntimeClass,
		revalidated(nodevalidation.ValidateRuntimeClass, nodevalidation.ValidateRuntimeClassUpdate)),
}

// workload is the validation of the strategies of a kind with a pod
// template: create and update take the pod validation options the
// template asks for (GetValidationOptionsFromPodTemplate), /status its
// own update (status nil: the kind has no status).
func workload[T any](create func(*T, corevalidation.PodValidationOptions) field.ErrorList,
	update func(obj, old *T, opts corevalidation.PodValidationOptions) field.ErrorList,
	status func(obj, old *T) field.ErrorList, template func(*T) *core.PodTemplateSpec) func(obj, old *T, sub string) field.ErrorList {
	return func(obj, old *T, sub string) field.ErrorList {
		if old == nil {
			return create(obj, podutil.GetValidationOptionsFromPodTemplate(template(obj), nil))
		}
		if sub == "status" && status != nil {
			return status(obj, old)
		}
		return update(obj, old, podutil.GetValidationOptionsFromPodTemplate(template(obj), template(old)))
	}
}

// withPrepare adds a preparation of internal type I (see
// serverKind.prepare) to its serverKind.
func withPrepare[I any](k serverKind, prepare func(obj, old *I) error) serverKind {
	k.prepare = func(obj, old runtime.Object) error {
		var o *I
		if old != nil {
			o = old.(any).(*I)
		}
		return prepare(obj.(any).(*I), o)
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

// validatePVC is the persistentvolumeclaim strategies' validation.
func validatePVC(obj, old *core.PersistentVolumeClaim, sub string) field.ErrorList {
	opts := corevalidation.ValidationOptionsForPersistentVolumeClaim(obj, old)
	switch {
	case old == nil:
		return corevalidation.ValidatePersistentVolumeClaim(obj, opts)
	case sub == "status":
		return corevalidation.ValidatePersistentVolumeClaimStatusUpdate(obj, old, opts)
	}
	return corevalidation.ValidatePersistentVolumeClaimUpdate(obj, old, opts)
}

// validateClusterRole is the clusterrole strategy's validation.
func validateClusterRole(obj, old *rbac.ClusterRole, _ string) field.ErrorList {
	if old == nil {
		return rbacvalidation.ValidateClusterRole(obj, rbacvalidation.ClusterRoleValidationOptions{})
	}
	invalid := false
	if old.AggregationRule != nil {
		for _, s := range old.AggregationRule.ClusterRoleSelectors {
			invalid = invalid || len(metav1validation.ValidateLabelSelector(&s, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
		}
	}
	return rbacvalidation.ValidateClusterRoleUpdate(obj, old, rbacvalidation.ClusterRoleValidationOptions{AllowInvalidLabelValueInSelector: invalid})
}

// daemonSetToV1 is the server's conversion of a DaemonSet to v1 but for
// the annotation deprecated.daemonset.template.generation, which it writes
// from the template generation: that is the DaemonSet strategy's to set
// (PrepareForCreate, PrepareForUpdate), which the offline engine does not
// run, so the annotation stays as the request had it.
func daemonSetToV1(in *apps.DaemonSet, out *appsv1.DaemonSet, s conversion.Scope) error {
	if err := k8sappsv1.Convert_apps_DaemonSet_To_v1_DaemonSet(in, out, s); err != nil {
		return err
	}
	if in.Spec.TemplateGeneration == 0 {
		delete(out.Annotations, appsv1.DeprecatedTemplateGeneration)
		if len(out.Annotations) == 0 {
			out.Annotations = nil
		}
	}
	return nil
}
