package findings

// Kind is a kind of finding as a report explains it (a CI report's
// rule): what it means and its one-line fix, and the class of the
// command's Vocabulary that --fail-on judges it by.
type Kind struct {
	// ID is the kind's stable word: the class's name where the kind is
	// a class ("loop"), its own word otherwise ("expiry").
	ID string
	// Name is the kind in a few words: "self-loop".
	Name string
	// Help says what a finding of the kind means.
	Help string
	// Fix is the one-line fix.
	Fix string
	// Class is the Vocabulary class --fail-on judges the kind by; "" for
	// a kind no --fail-on word names, which a Policy never fails on
	// (Policy.Fails("") is false).
	Class string
}
