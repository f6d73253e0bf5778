package predict

import "github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"

// jsonEqual is equality.Semantic.DeepEqual for the values unstructured
// objects hold (jsonvalue.Semantic): the offline engine compares whole
// objects several times per method, as the API server does to find no-ops.
func jsonEqual(a, b any) bool { return jsonvalue.Equal(jsonvalue.Semantic, a, b) }
