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
// Package managedfields does not talk to a cluster and does not print.
package managedfields
