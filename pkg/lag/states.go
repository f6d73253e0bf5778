package lag

// StateInfo is what a state that is not done means and how to fix it.
type StateInfo struct {
	State State
	Help  string
	Fix   string
}

// NotDone are the states of an object that is not done, with what each
// means and its one-line fix, for the reports that explain them (a CI
// report's rules). Current and no-generation are done, or cannot be
// judged, and are no finding.
var NotDone = []StateInfo{
	{Lagging, "the controller has not observed the newest generation: status.observedGeneration, or a condition's observedGeneration, is behind metadata.generation",
		"wait for the controller to catch up; if it does not, check that it runs and may update the object's status (its logs, its RBAC)"},
	{NeverObserved, "the object has a generation but no observedGeneration anywhere in its status: its controller has never said that it saw a spec, and kstatus-based tools (Flux, kpt) call it Current",
		"check that the object's controller runs and watches this type, and have it set status.observedGeneration"},
	{RollingOut, "the controller observed the newest generation, but the rollout is not done: kubectl rollout status, or the object's Ready or Reconciling condition, still waits",
		"wait for the rollout; if it does not progress, look at the new pods (kubectl describe, kubectl get events)"},
	{Paused, "the Deployment is paused (spec.paused): its new spec does not roll out until it is resumed, and kubectl rollout status and lag --wait wait",
		"resume it (kubectl rollout resume), or leave paused objects out of the gate (-l or TYPE)"},
	{Stalled, "the rollout cannot progress: its progress deadline passed (Progressing False, ProgressDeadlineExceeded) or a Stalled condition is True, so waiting longer does not help",
		"find why the new pods do not become ready (kubectl describe, kubectl get events: image, quota, scheduling), fix the spec and roll out again"},
}
