package serverrules

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/policy"
	policyvalidation "k8s.io/kubernetes/pkg/apis/policy/validation"
	"k8s.io/kubernetes/pkg/features"
)

// The validation of the kinds whose registry strategies call one function
// on create, one on update and (with a status subresource) one on /status,
// without options: the adapters below make them a serverKind's validate.

// plain is the validation of a kind whose strategy calls create on
// create and update on update.
func plain[T any](create func(*T) field.ErrorList, update func(obj, old *T) field.ErrorList) func(obj, old *T, sub string) field.ErrorList {
	return withStatus(create, update, nil)
}

// revalidated is the validation of a kind whose strategy's ValidateUpdate
// runs the create validation of the new object and then the update's
// (StorageClass, RuntimeClass).
func revalidated[T any](create func(*T) field.ErrorList, update func(obj, old *T) field.ErrorList) func(obj, old *T, sub string) field.ErrorList {
	return plain(create, func(obj, old *T) field.ErrorList {
		return append(create(obj), update(obj, old)...)
	})
}

// withStatus is plain with the status strategy's validation status (nil:
// the status strategy validates nothing).
func withStatus[T any](create func(*T) field.ErrorList, update, status func(obj, old *T) field.ErrorList) func(obj, old *T, sub string) field.ErrorList {
	return func(obj, old *T, sub string) field.ErrorList {
		switch {
		case old == nil:
			return create(obj)
		case sub == "status":
			if status == nil {
				return nil
			}
			return status(obj, old)
		}
		return update(obj, old)
	}
}

// The options functions below are those of the kinds' strategies
// (k8s.io/kubernetes/pkg/registry/<group>/<kind>/strategy.go), whose
// packages would link the whole registry.

// validateJob is the job strategies' validation (Validate: ValidateJob;
// ValidateUpdate: ValidateJob and ValidateJobUpdate, with
// validationOptionsForJob; the status strategy's checks of the
// controller's counters are not run: /status writes are the controller's).
func validateJob(obj, old *batch.Job, sub string) field.ErrorList {
	opts := jobOptions(obj, old)
	switch {
	case old == nil:
		return batchvalidation.ValidateJob(obj, opts)
	case sub == "status":
		return nil
	}
	return append(batchvalidation.ValidateJob(obj, opts), batchvalidation.ValidateJobUpdate(obj, old, opts)...)
}

// jobOptions is the job strategy's validationOptionsForJob.
func jobOptions(obj, old *batch.Job) batchvalidation.JobValidationOptions {
	var oldTemplate *core.PodTemplateSpec
	if old != nil {
		oldTemplate = &old.Spec.Template
	}
	opts := batchvalidation.JobValidationOptions{
		PodValidationOptions:  podutil.GetValidationOptionsFromPodTemplate(&obj.Spec.Template, oldTemplate),
		RequirePrefixedLabels: true,
	}
	if old == nil {
		return opts
	}
	opts.AllowInvalidLabelValueInSelector = opts.AllowInvalidLabelValueInSelector || metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
	suspended := old.Spec.Suspend != nil && *old.Spec.Suspend
	notStarted := old.Status.StartTime == nil
	opts.AllowMutableSchedulingDirectives = suspended && notStarted
	mutableTemplate := suspended && (notStarted || batchvalidation.IsConditionTrue(old.Status.Conditions, batch.JobSuspended)) && old.Status.Active == 0
	if utilfeature.DefaultFeatureGate.Enabled(features.MutablePodResourcesForSuspendedJobs) {
		opts.AllowMutablePodResources = mutableTemplate
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.MutableSchedulingDirectivesForSuspendedJobs) {
		opts.AllowMutableSchedulingDirectives = mutableTemplate
	}
	_, hadJobName := old.Spec.Template.Labels[batch.JobNameLabel]
	_, hadControllerUID := old.Spec.Template.Labels[batch.ControllerUidLabel]
	opts.RequirePrefixedLabels = hadJobName && hadControllerUID
	return opts
}

// placeholderUID stands for the uid the server gives a new object before
// its strategy runs: which one is unknown offline, and the validation of a
// Job's generated selector needs one.
const placeholderUID = "00000000-0000-0000-0000-000000000000"

// prepareJob is what the job strategy's PrepareForCreate does before
// validation (generateSelectorIfNeeded): without manualSelector, the
// template gets the job-name and controller-uid labels (legacy and
// prefixed) and the selector matches the controller-uid. On update
// nothing is generated.
func prepareJob(job, old *batch.Job) error {
	if old != nil {
		return nil
	}
	if job.UID == "" {
		job.UID = placeholderUID
	}
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return nil
	}
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	uid := string(job.UID)
	for label, value := range map[string]string{
		batch.LegacyJobNameLabel: job.Name, batch.JobNameLabel: job.Name,
		batch.LegacyControllerUidLabel: uid, batch.ControllerUidLabel: uid,
	} {
		if _, found := job.Spec.Template.Labels[label]; !found {
			job.Spec.Template.Labels[label] = value
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, found := job.Spec.Selector.MatchLabels[batch.ControllerUidLabel]; !found {
		job.Spec.Selector.MatchLabels[batch.ControllerUidLabel] = uid
	}
	return nil
}

// validateCronJob is the cronjob strategies' validation (the status
// strategy validates nothing).
func validateCronJob(obj, old *batch.CronJob, sub string) field.ErrorList {
	switch {
	case old == nil:
		return batchvalidation.ValidateCronJobCreate(obj, podutil.GetValidationOptionsFromPodTemplate(&obj.Spec.JobTemplate.Spec.Template, nil))
	case sub == "status":
		return nil
	}
	return batchvalidation.ValidateCronJobUpdate(obj, old, podutil.GetValidationOptionsFromPodTemplate(&obj.Spec.JobTemplate.Spec.Template, &old.Spec.JobTemplate.Spec.Template))
}

// validateHPA is the horizontalpodautoscaler strategies' validation.
func validateHPA(obj, old *autoscaling.HorizontalPodAutoscaler, sub string) field.ErrorList {
	switch {
	case old == nil:
		return autoscalingvalidation.ValidateHorizontalPodAutoscaler(obj, hpaOptions(obj, nil))
	case sub == "status":
		return autoscalingvalidation.ValidateHorizontalPodAutoscalerStatusUpdate(obj, old)
	}
	return autoscalingvalidation.ValidateHorizontalPodAutoscalerUpdate(obj, old, hpaOptions(obj, old))
}

// hpaOptions is the strategy's validationOptionsForHorizontalPodAutoscaler.
func hpaOptions(obj, old *autoscaling.HorizontalPodAutoscaler) autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions {
	opts := autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{
		MinReplicasLowerBound:           1,
		ScaleTargetRefValidationOptions: autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{},
		ObjectMetricsValidationOptions:  autoscalingvalidation.CrossVersionObjectReferenceValidationOptions{AllowEmptyAPIGroup: true},
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.HPAScaleToZero) || (old != nil && old.Spec.MinReplicas != nil && *old.Spec.MinReplicas == 0) {
		opts.MinReplicasLowerBound = 0
	}
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == obj.Spec.ScaleTargetRef.APIVersion && old.Spec.ScaleTargetRef.Kind == obj.Spec.ScaleTargetRef.Kind:
		opts.ScaleTargetRefValidationOptions.AllowInvalidAPIVersion = true
	case obj.Spec.ScaleTargetRef.Kind == "ReplicationController":
		opts.ScaleTargetRefValidationOptions.AllowEmptyAPIGroup = true
	}
	if old == nil {
		return opts
	}
	for _, m := range old.Spec.Metrics {
		if m.Type == autoscaling.ObjectMetricSourceType && m.Object != nil &&
			autoscalingvalidation.ValidateAPIVersion(m.Object.DescribedObject, opts.ObjectMetricsValidationOptions) != nil {
			opts.ObjectMetricsValidationOptions.AllowInvalidAPIVersion = true
			break
		}
	}
	return opts
}

// validatePDB is the poddisruptionbudget strategies' validation: the
// same on create and update, where a selector the old object already had
// with an invalid label value stays allowed.
func validatePDB(obj, old *policy.PodDisruptionBudget, sub string) field.ErrorList {
	switch {
	case old == nil:
		return policyvalidation.ValidatePodDisruptionBudget(obj, policyvalidation.PodDisruptionBudgetValidationOptions{})
	case sub == "status":
		return policyvalidation.ValidatePodDisruptionBudgetStatusUpdate(obj.Status, old.Status, field.NewPath("status"), policyV1)
	}
	invalidSelector := old.Spec.Selector != nil &&
		len(metav1validation.ValidateLabelSelector(old.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	return policyvalidation.ValidatePodDisruptionBudget(obj, policyvalidation.PodDisruptionBudgetValidationOptions{AllowInvalidLabelValueInSelector: invalidSelector})
}

// policyV1 is the version the status strategy validates policy/v1 writes as.
var policyV1 = schema.GroupVersion{Group: "policy", Version: "v1"}
