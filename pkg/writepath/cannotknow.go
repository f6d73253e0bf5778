package writepath

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// CannotKnowError is the answer of a write whose outcome the write path
// cannot know in process: the server's rules for it are not available
// here (a custom resource whose CustomResourceDefinition was not given, a
// version stored through a conversion webhook, a built-in kind whose rules
// do not run, an aggregated API). Callers report it as such, never as a
// guess.
type CannotKnowError struct {
	// Reason says what is not known, in a phrase.
	Reason string
	// Seen is what the write path answered without the rules it lacks,
	// when a caller may say so after Reason, never as the outcome; nil
	// when it stopped where those rules decide, or says nothing of them.
	Seen *Answer
}

func (e *CannotKnowError) Error() string { return "cannot know offline: " + e.Reason }

// Answer is a write's answer: the object written, or the error.
type Answer struct {
	Object *unstructured.Unstructured
	Err    error
}
