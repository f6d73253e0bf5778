package redact

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// minScrubbed is the shortest value Redactor.String replaces in free
// text: shorter ones would match ordinary words of a message.
const minScrubbed = 4

// Redactor redacts the Secret content of one result: objects, patches and
// the messages that might quote them. It remembers every value it marked,
// so that String and Error can take them out of free text the server or a
// library wrote. Built with show=true it changes nothing. A Redactor is
// safe for concurrent use.
type Redactor struct {
	show bool

	// mu guards values and replacer.
	mu       sync.Mutex
	values   map[string]bool
	replacer *strings.Replacer
}

// New returns a Redactor that hashes values, or, with show
// (--show-secrets), leaves them alone.
func New(show bool) *Redactor {
	return &Redactor{show: show, values: map[string]bool{}}
}

// Stamp says the content went through r: the printing layer prints a
// Secret only with one (see Check).
func (r *Redactor) Stamp() Stamp {
	if r.show {
		return Stamp{state: shown}
	}
	return Stamp{state: redacted}
}

// Object returns obj with its Secret values hashed when obj is a Secret,
// obj itself otherwise. The values are remembered for String.
func (r *Redactor) Object(obj map[string]any) map[string]any {
	if r.show || !IsSecret(obj) {
		return obj
	}
	return Secret(obj, r.mark)
}

// SecretObject is Object for content known to be a Secret's even where it
// does not say so itself: a merge patch, an apply body, a strategic merge
// patch.
func (r *Redactor) SecretObject(obj map[string]any) map[string]any {
	if r.show {
		return obj
	}
	return Secret(obj, r.mark)
}

// Remember adds the values of a Secret (content) to those String takes
// out, without changing it: for the objects a result does not print but a
// message might quote, such as the live object.
func (r *Redactor) Remember(obj map[string]any) {
	if r.show || obj == nil {
		return
	}
	Secret(obj, r.mark)
}

func (r *Redactor) mark(v string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range forms(v) {
		if len(f) >= minScrubbed && !r.values[f] {
			r.values[f] = true
			r.replacer = nil
		}
	}
	return Hash(v)
}

// forms are the ways a value can appear in a message: as is, base64
// encoded (stringData becomes data), base64 decoded (data read as
// stringData), and escaped inside a JSON string.
func forms(v string) []string {
	out := []string{v, base64.StdEncoding.EncodeToString([]byte(v))}
	if d, err := base64.StdEncoding.DecodeString(v); err == nil {
		out = append(out, string(d))
	}
	for _, f := range out[:len(out):len(out)] {
		if b, err := json.Marshal(f); err == nil {
			out = append(out, string(b[1:len(b)-1]))
		}
	}
	return out
}

// String replaces every remembered value in s (and its base64 and JSON
// forms) by its hash. Values shorter than 4 bytes are left: they would
// match ordinary words.
func (r *Redactor) String(s string) string {
	if r.show || s == "" {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.values) == 0 {
		return s
	}
	if r.replacer == nil {
		vs := make([]string, 0, len(r.values))
		for v := range r.values {
			vs = append(vs, v)
		}
		// Longest first: the replacer tries the old strings in order.
		slices.SortFunc(vs, func(a, b string) int {
			if len(a) != len(b) {
				return len(b) - len(a)
			}
			return strings.Compare(a, b)
		})
		pairs := make([]string, 0, 2*len(vs))
		for _, v := range vs {
			pairs = append(pairs, v, Hash(v))
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r.replacer.Replace(s)
}

// Error returns err with the remembered values taken out of its message
// (see String). errors.Is and errors.As still see the original error.
func (r *Redactor) Error(err error) error {
	if err == nil || r.show {
		return err
	}
	msg := err.Error()
	if s := r.String(msg); s != msg {
		return &redactedError{msg: s, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// ErrNotRedacted is returned by Check for a Secret that did not go through
// a Redactor.
var ErrNotRedacted = errors.New("refusing to print a Secret that has not been through the redaction helper (pkg/redact)")

type state uint8

const (
	unchecked state = iota
	redacted
	shown
)

// Stamp is what a Redactor gives content it went through. The zero Stamp
// means the content never did.
type Stamp struct{ state state }

// Checked reports whether the content went through a Redactor.
func (s Stamp) Checked() bool { return s.state != unchecked }

// Shown reports whether the Redactor was built with show (--show-secrets).
func (s Stamp) Shown() bool { return s.state == shown }

// Require returns nil when s is checked, else an error naming what.
func (s Stamp) Require(what string) error {
	if s.Checked() {
		return nil
	}
	return fmt.Errorf("%s: %w", what, ErrNotRedacted)
}

// Equal reports whether two stamps say the same (for go-cmp).
func (s Stamp) Equal(o Stamp) bool { return s == o }
