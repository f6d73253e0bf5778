// Package managedfields decodes an object's metadata.managedFields into typed
// entries and field sets, and answers ownership questions about them: who
// owns a field, which managers share it, and which hazards the ownership
// carries. It decodes FieldsV1 with structured-merge-diff's fieldpath
// package, never by parsing f:/k:/v:/i: keys by hand.
//
// A FieldsV1 trie such as
//
//	{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":
//	  {"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}}}}
//
// decodes to the set {.spec.replicas, .spec.template.spec.containers[name="nginx"],
// .spec.template.spec.containers[name="nginx"].image}: the "." key means the
// list item itself is owned (it exists because this manager put it there).
//
// Ownership merges every entry into one tree of field path -> owners (the
// entries whose set has the path as a member) and, attached to its object,
// says which node of the object each path is: k: items by their key values
// (several keys for ports: k:{"containerPort":80,"protocol":"TCP"}), v: items
// by value (finalizers), i: items by position. Ownership.Owners answers "who
// owns this path", which is also who a server-side apply changing it would
// conflict with. ParsePath reads kubectl-style paths
// (.spec.template.spec.containers[name=nginx].image) into the one field-path
// type, fieldpath.Path, used by owners, predict and the simulator's
// scenarios; GetPath and SetPath read and write an unstructured object along
// one, and ShortPathString writes one back. Hazards finds the
// ownership hazards (Apply and Update managers sharing a field, the
// client-side-apply migration trap, ancient-changes, generic manager names,
// fields the object lost) and Filter narrows a tree to a manager, a subtree
// or the shared fields.
//
// Package managedfields does not talk to a cluster and does not print.
package managedfields
