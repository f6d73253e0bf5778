// Package churn is the engine of kubectl rv churn: it watches object
// metadata only (PartialObjectMetadata, through the metadata client) of many
// resource types at once, counts every write, attributes it to a manager
// from managedFields, classifies it (spec when metadata.generation moved,
// status when written through /status or only to .status, metadata when
// only .metadata can have changed), and ranks objects, managers and types by
// writes per minute. It flags self-loops (one manager rewriting one object
// with no other writer in between, faster than Config.LoopRate, without a
// generation change; never a manager of a fight on the object) and fights
// (fields changing hands between managers, with the detection watch uses:
// follow.FieldWriters), and, for the busiest objects, fetches the full
// object on their next writes to name the fields that change (Explain).
//
// The entry point is Run. Inside, the list/watch/resume/relist driver is
// pkg/follow's (follow.Stream) over a metadata Source (follow.NewMetadataSource), and
// Tracker is the deterministic core: it consumes follow.Events one
// at a time and, at the end, returns the Report.
//
// Memory is what makes a cluster-wide watch possible, so Tracker keeps per
// object only what later events need: the resourceVersion, the generation,
// and for each managedFields entry its interned identity, its time and a
// 64-bit fingerprint of its field set. Field sets themselves (to tell which
// fields changed hands) are kept only for objects already written while
// watched, and full objects only for the few being explained.
//
// Example: a ConfigMap whose annotation "stamp" is rewritten by manager
// "looper" every 200 ms shows, after a minute, about 300 metadata writes by
// looper, no generation change, and so one self-loop of 300 writes/min.
//
// Package churn does not discover types (pkg/apitypes does), parse flags
// (pkg/cmd) or print (pkg/output/churnprint), and it never writes.
package churn
