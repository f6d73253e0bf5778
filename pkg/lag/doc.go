// Package lag answers "which controllers have not caught up with the latest
// spec?": for every object in scope it compares metadata.generation with
// status.observedGeneration and with the observedGeneration of each status
// condition, says since when the newest spec has been waiting, and who
// writes the status.
//
// An object is in one of four states:
//
//	no-generation   metadata.generation is absent (the type does not version its spec)
//	never-observed  a generation, but no observedGeneration anywhere in its status
//	lagging         status.observedGeneration, or a condition's observedGeneration,
//	                is behind metadata.generation
//	current         everything that reports an observedGeneration has seen the generation
//
// With Config.For RolledOut (--for rollout), an object whose generation has
// been observed is current only once rolled out, as kubectl rollout status
// decides (Deployments, StatefulSets, DaemonSets) or as the conditions
// kstatus reads say (other kinds); until then it is rolling-out, paused (a
// paused Deployment) or stalled (its progress deadline passed), and a
// wait ends at once, with ErrStalled, on a stalled one.
//
// A worked example: a Deployment at generation 7 whose status says
// observedGeneration 6 and whose Available condition says observedGeneration
// 5 is lagging with LAG 2 (the largest gap); kubectl wait
// --for=condition=Available blocks until that condition reaches 7. After the
// controller catches up, both say 7 and the object is current.
//
// Absent is not zero: an observedGeneration of 0 that the server returned is
// an observation (of nothing), one that is missing is not.
//
// Package lag owns the scope (which served types to scan, from discovery),
// the command's one entry (Run: scan, then wait or watch as Config.Mode
// says), the scan (Scan: paginated lists streamed page by page, types in parallel
// with a bound), the classification, the watch-driven wait (Follow, whose
// watches are the one watch core's: pkg/follow resumes and relists them)
// and the diffing of a live view (Diff: which rows to print again). Lists
// are decoded as a JSON stream into a narrow view of each object (metadata,
// status) rather than into unstructured maps, so that memory does not grow
// with the number of objects and a scan costs little more than the list
// itself; fields keep their "found" flag through pointers. Package lag does not print and does
// not parse flags: pkg/cmd builds a Config, pkg/output/lagprint renders the
// Report.
package lag
