package output

import "strconv"

// AtLeast renders a count for a table cell, "16+" when it is only a lower
// bound (a fight's flips beyond the history kept).
func AtLeast(n int, lowerBound bool) string {
	if lowerBound {
		return strconv.Itoa(n) + "+"
	}
	return strconv.Itoa(n)
}
