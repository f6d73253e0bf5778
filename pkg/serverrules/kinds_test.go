package serverrules

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

const (
	validJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  parallelism: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: "app:1"}]
`
	validCronJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: c, namespace: ns}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: app, image: "app:1"}]
`
	validHPA = `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: h, namespace: ns}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 1
  maxReplicas: 3
`
	validIngress = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: i, namespace: ns}
spec:
  rules:
  - host: a.example
    http:
      paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]
`
	validPDB = `
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: p, namespace: ns}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
`
	validRevision = `
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: r, namespace: ns}
revision: 1
data: {spec: {template: {}}}
`
	storedRevision = `
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: r, namespace: ns, resourceVersion: "5"}
revision: 1
data: {spec: {template: {}}}
`
	validLease = `
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l, namespace: ns}
spec: {holderIdentity: a, leaseDurationSeconds: 15}
`
)

// storedJob is validJob as the server stores it: its selector and the
// template's labels generated from its uid and name (the job strategy's
// PrepareForCreate), as a real server's read returns them.
const storedJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, uid: 0c8f8f3e-1b2a-4c4e-9a36-5b8c1e9d7f10, resourceVersion: "5"}
spec:
  parallelism: 1
  completions: 1
  backoffLimit: 6
  manualSelector: false
  selector: {matchLabels: {batch.kubernetes.io/controller-uid: 0c8f8f3e-1b2a-4c4e-9a36-5b8c1e9d7f10}}
  template:
    metadata:
      labels:
        batch.kubernetes.io/controller-uid: 0c8f8f3e-1b2a-4c4e-9a36-5b8c1e9d7f10
        batch.kubernetes.io/job-name: j
        controller-uid: 0c8f8f3e-1b2a-4c4e-9a36-5b8c1e9d7f10
        job-name: j
    spec:
      restartPolicy: Never
      containers: [{name: app, image: "app:1"}]
`

// TestServerValidationOfKinds: the strategies' validation of the kinds
// the corpus found offline engines accepting (#29), with the
// server's own messages (k8s.io/kubernetes/pkg/apis/<group>/validation).
// The object written is base (the valid object, or the stored one of an
// update) with from replaced by to.
func TestServerValidationOfKinds(t *testing.T) {
	tests := []struct {
		name, apiVersion, kind, base, from, to string
		update                                 bool
		want                                   string
	}{
		{"job valid", "batch/v1", "Job", validJob, "", "", false, ""},
		{"job parallelism -1", "batch/v1", "Job", validJob, "parallelism: 1", "parallelism: -1", false, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"},
		{"job manual selector missing", "batch/v1", "Job", validJob, "parallelism: 1", "manualSelector: true", false, "spec.selector: Required value"},
		{"job template changed", "batch/v1", "Job", storedJob, `image: "app:1"`, `image: "app:2"`, true, "spec.template: Invalid value"},
		{"job parallelism changed", "batch/v1", "Job", storedJob, "parallelism: 1", "parallelism: 2", true, ""},
		{"job completions changed", "batch/v1", "Job", storedJob, "completions: 1", "completions: 2", true, "spec.completions: Invalid value: 2: field is immutable"},
		{"cronjob valid", "batch/v1", "CronJob", validCronJob, "", "", false, ""},
		{"cronjob bad schedule", "batch/v1", "CronJob", validCronJob, `"*/5 * * * *"`, `"not a schedule"`, false, `spec.schedule: Invalid value: "not a schedule"`},
		{"hpa valid", "autoscaling/v2", "HorizontalPodAutoscaler", validHPA, "", "", false, ""},
		{"hpa min > max", "autoscaling/v2", "HorizontalPodAutoscaler", validHPA, "maxReplicas: 3", "maxReplicas: 0", false, "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`"},
		{"hpa min 0", "autoscaling/v2", "HorizontalPodAutoscaler", validHPA, "minReplicas: 1", "minReplicas: 0", false, "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"},
		{"ingress valid", "networking.k8s.io/v1", "Ingress", validIngress, "", "", false, ""},
		{"ingress bad pathType", "networking.k8s.io/v1", "Ingress", validIngress, "pathType: Prefix", "pathType: Regex", false, `pathType: Unsupported value: "Regex"`},
		{"pdb valid", "policy/v1", "PodDisruptionBudget", validPDB, "", "", false, ""},
		{"pdb min and max", "policy/v1", "PodDisruptionBudget", validPDB, "minAvailable: 1", "minAvailable: 1\n  maxUnavailable: 1", false, "minAvailable and maxUnavailable cannot be both set"},
		{"lease valid", "coordination.k8s.io/v1", "Lease", validLease, "", "", false, ""},
		{"controllerrevision valid", "apps/v1", "ControllerRevision", validRevision, "", "", false, ""},
		{"controllerrevision negative", "apps/v1", "ControllerRevision", validRevision, "revision: 1", "revision: -1", false, "revision: Invalid value: -1: must be greater than or equal to 0"},
		{"controllerrevision data changed", "apps/v1", "ControllerRevision", storedRevision, "{template: {}}", "{template: {x: 1}}", true, "data: Invalid value"},
		{"controllerrevision revision changed", "apps/v1", "ControllerRevision", storedRevision, "revision: 1", "revision: 2", true, ""},
		{"lease duration 0", "coordination.k8s.io/v1", "Lease", validLease, "leaseDurationSeconds: 15", "leaseDurationSeconds: 0", false, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvk := schema.FromAPIVersionAndKind(tt.apiVersion, tt.kind)
			obj := fromYAML(t, strings.Replace(tt.base, tt.from, strings.ReplaceAll(tt.to, `\n`, "\n"), 1))
			BuiltinDefaults(gvk, obj)
			var old *unstructured.Unstructured
			if tt.update {
				old = fromYAML(t, tt.base)
				BuiltinDefaults(gvk, old)
			}
			got := BuiltinValidate(gvk, obj, old, "")
			if (got == nil) != (tt.want == "") || (got != nil && !strings.Contains(got.Error(), tt.want)) {
				t.Errorf("errors %v, want %q", got, tt.want)
			}
		})
	}
}
