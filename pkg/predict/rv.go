package predict

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// ValidResourceVersion reports whether rv can be the resourceVersion a
// writer read: what the API server hands out, a positive integer without
// leading zeros that fits the 64 bits the server parses it into. Anything
// else the server cannot use as a precondition: it answers a 500 carrying
// Go's strconv error, and the offline engine would take it for stale.
func ValidResourceVersion(rv string) bool {
	if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
		return false
	}
	_, err := strconv.ParseUint(rv, 10, 64)
	return err == nil
}
