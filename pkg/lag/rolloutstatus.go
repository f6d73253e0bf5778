package lag

// The status viewers of kubectl rollout status, on the apps/v1 types:
// k8s.io/kubectl/pkg/polymorphichelpers (rollout_status.go, kubectl
// v0.36.6) with the conversion from unstructured left out. That package
// is not imported because it also holds kubectl's describers, command
// helpers and schema validation, which would enter the binary with it;
// TestRolloutStatusMatchesKubectl holds these equal to kubectl's viewers.

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	deploymentutil "k8s.io/kubectl/pkg/util/deployment"
)

// errNotRollingUpdate is what kubectl rollout status says of a StatefulSet
// or a DaemonSet whose update strategy is not RollingUpdate: it cannot
// judge it, and calls it done.
var errNotRollingUpdate = fmt.Errorf("rollout status is only available for %s strategy type", appsv1.RollingUpdateStatefulSetStrategyType)

// deploymentStatus is kubectl's DeploymentStatusViewer.Status without a
// revision.
func deploymentStatus(d *appsv1.Deployment) (string, bool, error) {
	if d.Generation <= d.Status.ObservedGeneration {
		cond := deploymentutil.GetDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
		if cond != nil && cond.Reason == deploymentutil.TimedOutReason {
			return "", false, fmt.Errorf("deployment %q exceeded its progress deadline", d.Name)
		}
		if d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d out of %d new replicas have been updated...\n", d.Name, d.Status.UpdatedReplicas, *d.Spec.Replicas), false, nil
		}
		if d.Status.Replicas > d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d old replicas are pending termination...\n", d.Name, d.Status.Replicas-d.Status.UpdatedReplicas), false, nil
		}
		if d.Status.AvailableReplicas < d.Status.UpdatedReplicas {
			return fmt.Sprintf("Waiting for deployment %q rollout to finish: %d of %d updated replicas are available...\n", d.Name, d.Status.AvailableReplicas, d.Status.UpdatedReplicas), false, nil
		}
		return fmt.Sprintf("deployment %q successfully rolled out\n", d.Name), true, nil
	}
	return "Waiting for deployment spec update to be observed...\n", false, nil
}

// daemonSetStatus is kubectl's DaemonSetStatusViewer.Status.
func daemonSetStatus(ds *appsv1.DaemonSet) (string, bool, error) {
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return "", true, errNotRollingUpdate
	}
	if ds.Generation <= ds.Status.ObservedGeneration {
		if ds.Status.UpdatedNumberScheduled < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...\n", ds.Name, ds.Status.UpdatedNumberScheduled, ds.Status.DesiredNumberScheduled), false, nil
		}
		if ds.Status.NumberAvailable < ds.Status.DesiredNumberScheduled {
			return fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...\n", ds.Name, ds.Status.NumberAvailable, ds.Status.DesiredNumberScheduled), false, nil
		}
		return fmt.Sprintf("daemon set %q successfully rolled out\n", ds.Name), true, nil
	}
	return "Waiting for daemon set spec update to be observed...\n", false, nil
}

// statefulSetStatus is kubectl's StatefulSetStatusViewer.Status.
func statefulSetStatus(sts *appsv1.StatefulSet) (string, bool, error) {
	if sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return "", true, errNotRollingUpdate
	}
	if sts.Status.ObservedGeneration == 0 || sts.Generation > sts.Status.ObservedGeneration {
		return "Waiting for statefulset spec update to be observed...\n", false, nil
	}
	if sts.Spec.Replicas != nil && sts.Status.ReadyReplicas < *sts.Spec.Replicas {
		return fmt.Sprintf("Waiting for %d pods to be ready...\n", *sts.Spec.Replicas-sts.Status.ReadyReplicas), false, nil
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		if sts.Spec.Replicas != nil && ru.Partition != nil {
			if sts.Status.UpdatedReplicas < (*sts.Spec.Replicas - *ru.Partition) {
				return fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...\n",
					sts.Status.UpdatedReplicas, *sts.Spec.Replicas-*ru.Partition), false, nil
			}
		}
		return fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...\n", sts.Status.UpdatedReplicas), true, nil
	}
	if sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		return fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...\n",
			sts.Status.UpdatedReplicas, sts.Status.UpdateRevision), false, nil
	}
	return fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...\n", sts.Status.CurrentReplicas, sts.Status.CurrentRevision), true, nil
}
