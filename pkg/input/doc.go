// Package input reads what a user names on the command line (a manifest
// given with -f, --live or --schema, a scenario, a watch recording, a
// patch file, standard input) with two bounds that every reader of such
// input shares:
//
//   - a size cap per document (MaxDocument): Lines gathers a stream's
//     lines into documents and fails past the cap with a *TooLargeError
//     naming the file, the line the document starts on and the fix;
//     ReadAll does the same for input that is one document. Neither holds
//     more than the cap and one read's worth of bytes, so /dev/zero, or a
//     FIFO fed without end, costs a bounded amount of memory.
//   - cancellation (Open, NewReader): a File's Read returns an error
//     wrapping the context's error once the context is done (Ctrl-C), also
//     while it waits in a read of a FIFO, a pipe or a terminal, and
//     opening a FIFO that no writer opens stops too.
//
// Package input does not parse: it splits a stream into lines and
// documents as its callers say (pkg/objects cuts YAML streams on "---"
// lines, pkg/inspect cuts a recording at every line) and hands them the
// bytes.
package input
