// Package inspect is the engine of kubectl rv watch: it follows objects
// through list and watch, and turns each new version into an Event that says
// who wrote it (from managedFields), which fields changed (from pkg/diff),
// how many cluster revisions passed since the object's previous version, and
// whether history was lost (a GAP) or two managers fight over a field. It
// also owns recordings, the one home of everything that reads them: it writes
// them (record), reads them back to re-render them (Replay, for kubectl rv
// watch --replay), and indexes them by object (Timeline, for kubectl rv
// watch --replay --object: an object at a resourceVersion, the diff of two).
//
// The entry points are Run (a live watch) and Replay (a recording;
// ReplayRecording reads one from a file or a pipe, for watch --replay),
// driven by a Config and delivering rows to a Sink; they return a Result
// with the Summary. Travel answers watch --replay's --list and --object. Inside, four parts are kept apart so that each can be
// tested alone:
//
//   - the stream is the one watch core's driver (follow.Stream): through a
//     follow.Source (the list/watch seam; follow.NewDynamicSource adapts a
//     dynamic client) it lists, watches from the list's resourceVersion with
//     bookmarks, resumes after dropped connections from the last
//     resourceVersion it saw (backoff with jitter), and relists after 410
//     Gone. It emits follow.Events and nothing else.
//   - the runner (run.go) is the bookkeeping: it records each follow.Event,
//     hands it to the Tracker, delivers the rows to the Sink and stops after
//     MaxEvents rows.
//   - Tracker (tracker.go) is the deterministic core: it consumes
//     follow.Events one at a time and returns Events (rows) and, at the
//     end, a Summary. Given the same follow.Events it returns the same
//     Events, which is what makes a recording replayable. Of each watched
//     object it keeps a snapshot (snapshot.go): the last version as compact
//     JSON and its managedFields entries interned, in less than the
//     object's own JSON.
//   - The recording (record.go) is the JSON-lines form of the follow.Events:
//     RecordingWriter writes it, ReadRecording reads it back. Its format is
//     documented in docs/watch.md and is stable. Timeline (history.go)
//     indexes a recording by object and returns typed reports (HistoryList,
//     VersionAt, VersionDiff).
//
// Package inspect does not print (pkg/output/watchprint does), does not parse
// flags or resolve TYPE/NAME arguments (pkg/cmd does) and never writes to the
// cluster.
package inspect
