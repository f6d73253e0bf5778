// Package positions places the objects of a manifest file, and each of
// their fields, on the lines of that file, so that a finding about a field
// (a conflict on .spec.replicas) can point at the line a pull request
// changes: the `replicas:` key, or the `- name: web` line of a list item.
//
// Parse takes the bytes of a file that the caller has already read
// through pkg/input (bounded) and its name. It cuts the stream into
// documents with the rule pkg/objects uses (input.YAMLSeparator) and
// yields one Object per object pkg/objects.Decode yields, in the same
// order and with the same document line and List item, so that an
// objects.Source finds its Object (File.Object). Each document is parsed
// with go.yaml.in/yaml/v3's node API, which keeps the line and column of
// every node; fields are looked up the way sigs.k8s.io/yaml decodes them
// (a later duplicate key wins, merge keys, YAML 1.1 scalars in keys and
// list keys), so the field found is the field the object has.
//
// Object.Locate takes a structured-merge-diff fieldpath.Path, the one path
// type of kubectl-rv (managedFields, conflicts, predict), and resolves
// field names, list items keyed by their merge keys, set items by value,
// and indexes. A path that does not resolve points at its nearest
// ancestor that does, and finally at the object's first line: never at a
// wrong line. A field reached through an alias points at the alias (the
// line the object has), not at the anchor.
//
// Rendered output (helm template's "# Source:" comments, kustomize's
// config.kubernetes.io/origin annotation) marks each Object with the
// Template it came from, and every Location of that object with it too,
// so that a printer can point at the template and say so.
//
// Package positions does not read files, decode objects (pkg/objects) or
// print findings (pkg/output).
package positions
