package mvcc

// Revision identifies one change: Main is the global revision of the write
// transaction, Sub numbers the changes inside it from 0. Revisions order by
// Main, then Sub.
type Revision struct {
	Main int64
	Sub  int64
}

// GreaterThan reports whether r comes after b.
func (r Revision) GreaterThan(b Revision) bool {
	if r.Main != b.Main {
		return r.Main > b.Main
	}
	return r.Sub > b.Sub
}

// Compare returns -1, 0 or 1 as r is before, equal to or after b.
func (r Revision) Compare(b Revision) int {
	switch {
	case r.Main < b.Main || (r.Main == b.Main && r.Sub < b.Sub):
		return -1
	case r == b:
		return 0
	default:
		return 1
	}
}
