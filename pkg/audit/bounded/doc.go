// Package bounded puts the bounds every --source reader holds a log
// service to (pkg/audit.SourceConfig) around the network client the
// reader's library uses, in one place:
//
//   - Transport, an http.RoundTripper for the readers whose libraries
//     speak HTTP (the AWS SDK's HTTP client, elastic-transport-go's and
//     opensearch-go's transports, clickhouse-go's HTTP interface): an idle
//     timeout on the wait for the answer's headers (connect, TLS, the
//     service's work) and on each read of its body, a total time per
//     answer, and a cap on the bytes of one answer;
//   - Conn, a net.Conn for clickhouse-go's native protocol: the idle
//     timeout on every read.
//
// Transport sends a small request body from a copy of its own, so that a
// client that closes its body once the answer's headers come (the AWS
// SDK) cannot make the transport drop the connection mid-answer.
//
// A bound that cuts an answer off is an *Error (errors.Is ErrTooLarge,
// ErrIdle or ErrPageTimeout) that tells the AWS SDK's retryer not to try
// again. The request's own context reaches the client: cancelling it
// aborts a connect, a wait for headers or a body's read, and the reader
// gets the context's error (context.Canceled), not a bound's.
//
// Package bounded does not decide what the readers send or how they name
// the service in errors (each reader wraps these errors with its source's
// name).
package bounded
