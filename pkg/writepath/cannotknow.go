package writepath

// CannotKnowError is the answer of a write whose outcome the write path
// cannot know in process: the server's rules for it are not available
// here (a custom resource whose CustomResourceDefinition was not given,
// a version stored through a conversion webhook). Callers report it as
// such, never as a guess.
type CannotKnowError struct {
	// Reason says what is not known, in a phrase.
	Reason string
}

func (e *CannotKnowError) Error() string { return "cannot know offline: " + e.Reason }
