// Package follow is the one watch core of kubectl-rv: every engine that
// follows the cluster (watch, churn, lag and leases) lists,
// watches, resumes and relists through it, and describes what it saw in its
// words.
//
// It owns:
//
//   - the driver (stream.go): for each Target it lists page by page (unless
//     it starts from a resourceVersion), watches from the list's
//     resourceVersion with bookmarks, resumes a dropped watch from the last
//     resourceVersion seen after a backoff with jitter (so that no event is
//     seen twice), and relists after 410 Gone, naming the lost range. Stream
//     sends everything as Events on a channel (watch, churn); Follow hands a
//     single target's watch events to a Handler that does its own listing
//     (lag, whose lists are decoded as a stream into narrow objects).
//   - the sources (source.go, metadata.go): the list/watch seam. A full-object
//     Source over the dynamic client (NewDynamicSource) and a metadata-only
//     one over the metadata client (NewMetadataSource, for engines that
//     follow many types at once and need only who wrote what).
//   - the warnings (warnings.go): Warnings keeps what the driver warns of,
//     from its targets' goroutines, for the engines' reports, and hands each
//     warning on as it comes.
//   - the vocabulary (event.go, gap.go, class.go, fight.go): Event, the unit
//     the driver emits and watch records line by line (its JSON is the
//     recording format, documented in docs/watch.md); Gap, history lost to a
//     410; Class, the one classification of a write (spec, status, metadata,
//     other); Fight and FieldWriters, a field changing hands between
//     managers.
//
// Package follow does not attribute writes to managers, diff objects or
// keep per-object state (the engines' trackers do), does not read or write
// recordings (pkg/inspect does), does not print and never writes to the
// cluster.
//
// Example: a watch of deployments.apps from resourceVersion 830 whose
// history the API server has compacted receives 410 Gone; the driver warns,
// relists at resourceVersion 990 and sends the relist's items as LIST Events
// ended by a SYNCED Event with GapFrom 830. A tracker turns that into a
// Gap{From: "830", To: "990", Revisions: 160} and the changes it finds by
// comparing the relist with what it knew.
package follow
