package text

import "strconv"

// Plural counts a noun whose plural adds "s": "1 type", "0 types",
// "2 self-loops". The word may be a phrase whose last word takes the "s"
// ("method prediction").
func Plural(n int, word string) string {
	return Plurals(n, word, word+"s")
}

// Plurals counts with an irregular plural, or a phrase whose verb agrees
// with the count: Plurals(n, "entry was", "entries were") gives
// "1 entry was", "3 entries were".
func Plurals(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
