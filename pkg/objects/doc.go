// Package objects selects the Kubernetes objects a command works on, the way
// kubectl does: TYPE NAME, TYPE/NAME, several types, -l, -n and -A against a
// cluster, or -f FILE|DIR|- for offline input (multi-document YAML, JSON,
// and List objects, with every object remembering the file and line it came
// from so that errors can point at it).
//
// Package objects loads and decodes; it does not interpret what it loads.
package objects
