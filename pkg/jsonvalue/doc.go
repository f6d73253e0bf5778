// Package jsonvalue holds the one implementation of the small operations on
// JSON that several packages need, so that they cannot drift apart:
//
//   - AppendString encodes a string exactly as encoding/json does; the
//     hand-written encoders of reports (pkg/output), of managedFields
//     (pkg/managedfields) and of the simulated API server's store
//     (pkg/simulate/apiserver) all call it.
//   - AppendValue (and AppendObject, which can leave members out) writes a
//     decoded JSON value exactly as encoding/json.Marshal does; the watch
//     snapshots (pkg/inspect) and the simulated API server's store
//     (pkg/simulate/apiserver) are written with it.
//   - Equal compares decoded JSON values, the map[string]any, []any,
//     string, int64, float64, bool and nil that unstructured objects hold,
//     in one of two modes: Semantic (equality.Semantic.DeepEqual's rules,
//     for the offline API server's no-op and generation decisions) or
//     Numeric (a number is its value, for showing what changed).
//   - WithoutMeta copies a decoded object's top level and metadata
//     without some metadata keys, sharing the rest: the offline write
//     path (pkg/writepath), predict's comparisons and requests
//     (pkg/predict) and the blame view (pkg/output/ownersprint).
//
// Terminal escaping (output.Escape), JSON pointer escaping
// (github.com/go-openapi/jsonpointer.Escape) and HTML escaping
// (html.EscapeString) are other contracts and live elsewhere.
//
// Package jsonvalue has no state and imports nothing of kubectl-rv.
package jsonvalue
