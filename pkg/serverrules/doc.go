// Package serverrules runs the API server's own defaulting and validation
// of the built-in kinds of core/v1 and apps/v1, linked from
// k8s.io/kubernetes, behind the write path's hooks (writepath.Rules): the
// v1 defaulting functions (what the server runs when it decodes a
// request), the conversion to the internal types and back to v1 (what it
// stores and replies, with the conversions' rewrites: a Secret's
// stringData, a pod spec's deprecated serviceAccount), and the validation their
// registry strategies call (Validate, ValidateUpdate and the status
// strategy's ValidateUpdate). What the strategies and the storage do
// around them is written from the server's code, since those packages
// would link the whole registry: the generation, status and uid rules in
// pkg/writepath (prepare.go), a Service's allocated values here
// (service.go).
//
// Custom resources are the subpackage crd's: the decoding (pruning,
// defaults) and validation apiextensions-apiserver runs for the custom
// resources of the CRDs given (crd.Rules, crd.WithSchema), beside these
// rules.
//
// It is its own package because k8s.io/kubernetes' feature gates bring a
// command-line flag library (spf13/pflag): the commands (pkg/cmd) hand
// Rules to predict and simulate, and the engines do not link it.
package serverrules
