// Package objects selects the Kubernetes objects a command works on, the way
// kubectl does: a Selection of TYPE NAME, TYPE/NAME, several types, a label
// or field selector, a namespace or all of them, read from a cluster through
// cli-runtime's resource.Builder; or files, directories and stdin for
// offline input (multi-document YAML, JSON, and List objects, with every
// object remembering the file and line it came from so that errors can point
// at it). Files are read a document at a time through pkg/input: a document
// over input.MaxDocument is an error naming the file and line, and Ctrl-C
// (the context) stops a read, also one waiting on a FIFO or a terminal.
//
// Package objects loads and decodes; it does not interpret what it loads.
// It binds no flags: pkg/cmd turns -f, -R, -l, --field-selector, -A and
// --chunk-size into a Selection.
package objects
