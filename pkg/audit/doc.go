// Package audit reads kube-apiserver audit logs: JSON lines of
// audit.k8s.io/v1 Event, from files, directories of rotated files, gzip
// files and stdin (Open, Decode). It decodes only the fields kubectl rv
// conflicts needs (verb, requestURI, user, user agent, objectRef, response
// status, timestamps, and responseObject.metadata.resourceVersion) and
// hands on only events of stage ResponseComplete or Panic.
//
// Request and response bodies are never kept: they may hold Secrets. The
// decoder skips them while parsing, except for the one field
// responseObject.metadata.resourceVersion. That is also why it does not use
// k8s.io/apiserver's audit types, whose Unknown bodies keep the raw bytes.
//
// Bad input is an error naming file:line: a line that is not an audit.k8s.io/v1
// Event (another JSON object, v1beta1, not JSON), a line over MaxLineBytes,
// a gzip stream cut short. A last line cut short (the API server was
// writing it) is tolerated and counted in Stats.Truncated, unless
// Options.Strict asks for every skipped line to be an error.
//
// Decoding is a narrow hand-written scanner of those fields (scanEvent),
// held to encoding/json by a differential fuzz target; a line it is not
// sure of (a syntax or type error, a duplicate or case-folded key) goes to
// encoding/json, so bad lines keep encoding/json's words. Each decoding
// goroutine remembers the user objects and skipped objects it has read
// (valueMemo): a value byte for byte the same as one of them is not read
// again; a second fuzz target holds that to the scanner. Decode cuts a
// stream into blocks of whole lines, decodes Options.Workers blocks at
// once and hands events on in the log's order; the events' strings point
// into the block they came from, which Options.Reuse lets Decode fill
// again once its events are handed on. With Options.Reuse, a regular file
// (not gzip) is mapped on Linux instead of read: a block is then a map of
// the file's lines, unmapped once its events are handed on, and the kernel
// copies nothing; a file that shrinks while it is read (truncated by a
// rotation) is an error, not a crash.
//
// Cloud log services' exports, as their CLIs print them, are recognised by
// their first keys and read as the events they carry (exportKind): the AWS
// CLI's (the events unchanged in each message), gcloud logging read's
// (GKE's AuditLog entries, gkeLine) and az monitor log-analytics query's
// (AKSAudit rows, azLine); the last two are turned into audit.k8s.io/v1
// events with what they lack left empty, and errors name the export's
// line of the entry.
//
// The API server's audit webhook is received by Listen (conflicts
// --listen): a TLS server (its own certificate, or the operator's) that
// serves only senders with its bearer token or a client certificate, and
// writes the API server's webhook kubeconfig for it. Each item of a
// batch is read as the decoder will read its line; one it would refuse is
// skipped and counted, never the capture. Memory is bounded by what it
// holds (the bodies being read, the lines queued), each request by a
// header and body deadline, each address's connections by a cap. Its
// stream is a Source like a file's; the analysis's copy of it (Spool) is
// bounded, and once the copy stops the receiver drops the events too late
// for the analysis to take without it.
//
// Package audit does not analyse events (pkg/conflicts does) or print.
package audit
