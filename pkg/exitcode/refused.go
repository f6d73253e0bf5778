package exitcode

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// IsForbidden reports whether err, or any error it wraps or aggregates (a
// resource.Builder visit of several types), is the API server's 403.
func IsForbidden(err error) bool {
	if apierrors.IsForbidden(err) {
		return true
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if IsForbidden(e) {
				return true
			}
		}
	}
	return false
}

// Refused is the one permission hint: a 403 becomes a cluster error (exit
// 3) that says, after the flag or object it is about (where), which
// request was refused and the rights it needs, then the server's own
// message, which names the user:
//
//	--write-probe demo: the API server refused a dry-run create of a ConfigMap (403 Forbidden):
//	your user needs create on configmaps in namespace demo: configmaps is forbidden: User "bob" ...
//
// Any other error is returned as it is.
func Refused(err error, where, request, need string) error {
	if !IsForbidden(err) {
		return err
	}
	return Cluster(fmt.Errorf("%s: the API server refused %s (403 Forbidden): your user needs %s: %w", where, request, need, err))
}
