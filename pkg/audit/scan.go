package audit

import (
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// scanEvent decodes one line into ev, kind and apiVersion exactly as
// json.Unmarshal into wireEvent followed by wireEvent.event would, for the
// lines it understands; ok is false for every other line, which the caller
// then hands to encoding/json (so that errors keep encoding/json's words).
//
// It is a narrow reader of the fields wireEvent names: unknown fields and
// bodies are validated and skipped without being decoded. It gives up
// (ok false) on anything where encoding/json's rules are subtle: a
// syntax or type error, a key given twice, a key that matches a field only
// case-insensitively or through an escape, nesting deeper than maxScanDepth.
// FuzzScannerMatchesEncodingJSON holds it to encoding/json.
//
// The strings in ev are substrings of line where no unescaping was needed:
// they keep line alive, so callers copy what they keep for long. With a
// memo (see valueMemo), the user's strings may be the memo's instead.
func scanEvent(line string, ev *Event, memo *valueMemo) (kind, apiVersion string, ok bool) {
	s := scanner{s: line, memo: memo}
	var top topFields
	s.ws()
	if !s.object(func(key string) bool { return top.field(&s, key) }) {
		return "", "", false
	}
	s.ws()
	if s.i != len(s.s) {
		return "", "", false
	}
	top.finish(ev)
	return top.kind, top.apiVersion, true
}

// maxScanDepth is how deep the scanner follows skipped values before it
// leaves the line to encoding/json (whose own limit is 10000).
const maxScanDepth = 200

type scanner struct {
	s     string
	i     int
	depth int
	// keyPlain says that the key object last handed to its field function
	// has no escape and is ASCII.
	keyPlain bool
	// memo, when set, holds the user objects read before.
	memo *valueMemo
	// inList says the event is an item of a list, followed by the next
	// item: the memo is not asked for the values it skips (see memoSkip).
	inList bool
}

// userFields is a wireUser as read so far.
type userFields struct {
	username string
	pod      string
	seen     uint32
}

// topFields is the top-level object as read so far; seen bits catch
// duplicate keys.
type topFields struct {
	kind, apiVersion string
	ev               Event
	user, imp        userFields
	impersonated     bool
	seen             uint32
}

func (t *topFields) finish(ev *Event) {
	*ev = t.ev
	u := &t.user
	if t.impersonated {
		u = &t.imp
	}
	ev.Username, ev.PodName = u.username, u.pod
}

var topKeys = []string{"kind", "apiVersion", "auditID", "stage", "requestURI", "verb", "user", "impersonatedUser",
	"userAgent", "objectRef", "responseStatus", "responseObject", "requestReceivedTimestamp", "stageTimestamp"}

// topIndex is the index of key in topKeys, -1 if none: a switch finds it
// by length and bytes rather than comparing key with each.
func topIndex(key string) int {
	switch key {
	case "kind":
		return 0
	case "apiVersion":
		return 1
	case "auditID":
		return 2
	case "stage":
		return 3
	case "requestURI":
		return 4
	case "verb":
		return 5
	case "user":
		return 6
	case "impersonatedUser":
		return 7
	case "userAgent":
		return 8
	case "objectRef":
		return 9
	case "responseStatus":
		return 10
	case "responseObject":
		return 11
	case "requestReceivedTimestamp":
		return 12
	case "stageTimestamp":
		return 13
	}
	return -1
}

func (t *topFields) field(s *scanner, key string) bool {
	i, ok := s.found(key, topIndex(key), topKeys, &t.seen)
	if !ok {
		return false
	}
	e := &t.ev
	switch i {
	case -1:
		return s.memoSkip()
	case 0:
		return s.str(&t.kind)
	case 1:
		return s.str(&t.apiVersion)
	case 2:
		return s.str(&e.AuditID)
	case 3:
		return s.str(&e.Stage)
	case 4:
		return s.str(&e.RequestURI)
	case 5:
		return s.str(&e.Verb)
	case 6:
		return s.memoUser(&t.user)
	case 7:
		if s.null() {
			return true
		}
		t.impersonated = true
		return s.user(&t.imp)
	case 8:
		return s.str(&e.UserAgent)
	case 9:
		return s.objectRef(&e.ObjectRef)
	case 10:
		return s.status(e)
	case 11:
		return s.responseObject(e)
	case 12:
		return s.time(&e.RequestReceived)
	default:
		return s.time(&e.StageTimestamp)
	}
}

var userKeys = []string{"username", "extra"}

// memoSkip skips a value as skip does, or as one the memo holds: an
// event's other fields (its annotations, say) repeat too. Not in a list's
// item: the bytes after a value, which its bucket is found by, run into
// the next item there (its own auditID), so that a value at an item's end
// (its annotations) would never be found, and would be kept again and
// again, each time in the place of one the memo needs.
func (s *scanner) memoSkip() bool {
	if s.memo == nil || s.inList || s.i >= len(s.s) || s.s[s.i] != '{' {
		return s.skip()
	}
	rest := s.s[s.i:]
	b := s.memo.bucket(rest)
	if e := s.memo.find(b, rest); e != nil && e.skipped {
		s.i += len(e.raw)
		return true
	}
	start := s.i
	if !s.skip() {
		return false
	}
	s.memo.keep(b, s.s[start:s.i], userFields{}, true)
	return true
}

// memoUser reads a user object as user does, or takes it from the memo
// when the line holds one read before, byte for byte.
func (s *scanner) memoUser(u *userFields) bool {
	if s.memo == nil || s.i >= len(s.s) || s.s[s.i] != '{' {
		return s.user(u)
	}
	rest := s.s[s.i:]
	b := s.memo.bucket(rest)
	if e := s.memo.find(b, rest); e != nil && !e.skipped {
		*u = e.user
		s.i += len(e.raw)
		return true
	}
	start := s.i
	if !s.user(u) {
		return false
	}
	s.memo.keep(b, s.s[start:s.i], *u, false)
	return true
}

func (s *scanner) user(u *userFields) bool {
	return s.fields(userKeys, &u.seen, func(i int) bool {
		if i == 0 {
			return s.str(&u.username)
		}
		return s.extra(u)
	})
}

// extra reads map[string][]string, keeping the first pod name.
func (s *scanner) extra(u *userFields) bool {
	if s.null() {
		return true
	}
	seenPod := false
	return s.object(func(key string) bool {
		switch {
		case !s.keyPlain && strings.IndexByte(key, '\\') >= 0:
			return false
		case key != PodNameKey:
			return s.strings(nil)
		}
		if seenPod {
			return false
		}
		seenPod = true
		return s.strings(&u.pod)
	})
}

// strings reads a []string (or null), storing its first element in first.
func (s *scanner) strings(first *string) bool {
	if s.null() {
		return true
	}
	if !s.byte('[') {
		return false
	}
	s.ws()
	if s.byte(']') {
		return true
	}
	for n := 0; ; n++ {
		s.ws()
		var v string
		if !s.null() && !s.str(&v) {
			return false
		}
		if n == 0 && first != nil {
			*first = v
		}
		s.ws()
		if s.byte(']') {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

var objectRefKeys = []string{"resource", "namespace", "name", "apiGroup", "apiVersion", "subresource", "resourceVersion"}

func (s *scanner) objectRef(r *ObjectRef) bool {
	var seen uint32
	fields := [...]*string{&r.Resource, &r.Namespace, &r.Name, &r.APIGroup, &r.APIVersion, &r.Subresource, &r.ResourceVersion}
	return s.fields(objectRefKeys, &seen, func(i int) bool { return s.str(fields[i]) })
}

var statusKeys = []string{"code", "reason", "message", "details"}
var kindKeys = []string{"kind"}
var metadataKeys = []string{"metadata"}
var resourceVersionKeys = []string{"resourceVersion"}

func (s *scanner) status(e *Event) bool {
	// Most events' status is the API server's plain success, read here
	// at once, as the general path below reads it: metadata skipped, the
	// code a number of three digits.
	const plain = `{"metadata":{},"code":`
	if rest := s.s[s.i:]; len(rest) >= len(plain)+4 && rest[:len(plain)] == plain {
		if d := rest[len(plain):]; d[0] >= '1' && d[0] <= '9' && d[1] >= '0' && d[1] <= '9' && d[2] >= '0' && d[2] <= '9' && d[3] == '}' {
			e.Code = int(d[0]-'0')*100 + int(d[1]-'0')*10 + int(d[2]-'0')
			s.i += len(plain) + 4
			return true
		}
	}
	var seen uint32
	return s.fields(statusKeys, &seen, func(i int) bool {
		switch i {
		case 0:
			return s.int(&e.Code)
		case 1:
			return s.str(&e.Reason)
		case 2:
			return s.str(&e.Message)
		}
		return s.oneField(kindKeys, &e.DetailsKind)
	})
}

func (s *scanner) responseObject(e *Event) bool {
	var seen uint32
	return s.fields(metadataKeys, &seen, func(int) bool { return s.oneField(resourceVersionKeys, &e.ResponseRV) })
}

// oneField reads an object (or null) of which only the string field
// keys[0] is kept.
func (s *scanner) oneField(keys []string, dst *string) bool {
	var seen uint32
	return s.fields(keys, &seen, func(int) bool { return s.str(dst) })
}

// fields reads an object (or null) whose known keys are keys (seen marks
// those read), handing each known key's index to read and skipping the
// others; a key given twice, or one encoding/json must judge (see lookup),
// fails.
func (s *scanner) fields(keys []string, seen *uint32, read func(i int) bool) bool {
	if s.null() {
		return true
	}
	return s.object(func(key string) bool {
		i, ok := s.lookup(key, keys, seen)
		switch {
		case !ok:
			return false
		case i == -1:
			return s.skip()
		}
		return read(i)
	})
}

// lookup finds key among keys. It returns -1 for a key to skip, and ok
// false for keys encoding/json must judge: given twice, or equal to a field
// only when case is folded or escapes are read.
func (s *scanner) lookup(key string, keys []string, seen *uint32) (int, bool) {
	return s.found(key, slices.Index(keys, key), keys, seen)
}

// found is lookup once key's index i in keys (-1 if none) is known.
func (s *scanner) found(key string, i int, keys []string, seen *uint32) (int, bool) {
	if i >= 0 {
		if *seen&(1<<i) != 0 {
			return 0, false
		}
		*seen |= 1 << i
		return i, true
	}
	for i := 0; i < len(key) && !s.keyPlain; i++ {
		if c := key[i]; c >= utf8.RuneSelf || c == '\\' {
			return 0, false
		}
	}
	for _, k := range keys {
		if len(k) == len(key) && strings.EqualFold(k, key) {
			return 0, false
		}
	}
	return -1, true
}

// ws skips white space. Audit logs have none between tokens: one
// comparison tells.
func (s *scanner) ws() {
	for s.i < len(s.s) && s.s[s.i] <= ' ' {
		switch s.s[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it is next.
func (s *scanner) byte(c byte) bool {
	if s.i < len(s.s) && s.s[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes the literal null if it is next (after white space).
func (s *scanner) null() bool {
	s.ws()
	if strings.HasPrefix(s.s[s.i:], "null") {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling field with each raw key (escapes left
// as they are) positioned before the value.
func (s *scanner) object(field func(key string) bool) bool {
	s.ws()
	if !s.byte('{') {
		return false
	}
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.ws()
	if s.byte('}') {
		s.depth--
		return true
	}
	// Audit logs have no white space between tokens: each separator is
	// looked for first where it would be without any.
	for {
		s.ws()
		start := s.i + 1
		esc, nonASCII, ok := s.scanString()
		if !ok {
			return false
		}
		key := s.s[start : s.i-1]
		if !s.byte(':') {
			if s.ws(); !s.byte(':') {
				return false
			}
		}
		// No white space is skipped before the value: every reader of
		// one skips it first (null, str, skip...), and the memo reads
		// only a value that starts at once.
		s.keyPlain = !esc && !nonASCII
		if !field(key) {
			return false
		}
		if s.i < len(s.s) && s.s[s.i] == ',' {
			s.i++
			continue
		}
		s.ws()
		if s.byte('}') {
			s.depth--
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// str reads a string or null into dst.
func (s *scanner) str(dst *string) bool {
	if s.i < len(s.s) && s.s[s.i] != '"' {
		s.ws()
	}
	if s.i < len(s.s) && s.s[s.i] == '"' {
		v, ok := s.stringValue()
		if ok {
			*dst = v
		}
		return ok
	}
	if s.null() {
		return true
	}
	v, ok := s.stringValue()
	if ok {
		*dst = v
	}
	return ok
}

// int reads an integer or null into dst, as encoding/json does for an int
// field (no fraction, no exponent, in range).
func (s *scanner) int(dst *int) bool {
	if s.null() {
		return true
	}
	start := s.i
	if !s.number() {
		return false
	}
	v, err := strconv.ParseInt(s.s[start:s.i], 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*dst = int(v)
	return true
}

// time reads a string (or null) the way time.Time's UnmarshalJSON does:
// from the raw literal, escapes not read.
func (s *scanner) time(dst *time.Time) bool {
	s.ws()
	start := s.i
	if s.null() {
		return true
	}
	if !s.skipString() {
		return false
	}
	raw := s.s[start:s.i]
	if strings.IndexByte(raw, '\\') >= 0 {
		return false
	}
	if t, ok := utcTime(raw[1 : len(raw)-1]); ok {
		*dst = t
		return true
	}
	var t time.Time
	if t.UnmarshalJSON([]byte(raw)) != nil {
		return false
	}
	*dst = t
	return true
}

// utcTime reads the API server's form, 2026-11-24T14:21:55.123456Z (one
// to nine digits of fraction), as time.Time's UnmarshalJSON does; ok is
// false for any other form or a date or time out of range, which
// UnmarshalJSON then judges.
func utcTime(v string) (t time.Time, ok bool) {
	if len(v) < 20 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' || v[len(v)-1] != 'Z' {
		return t, false
	}
	year, month, day := two(v[0], v[1])*100+two(v[2], v[3]), two(v[5], v[6]), two(v[8], v[9])
	hour, minute, sec := two(v[11], v[12]), two(v[14], v[15]), two(v[17], v[18])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return t, false
	}
	nsec := 0
	if frac := v[19 : len(v)-1]; frac != "" {
		n := len(frac) - 1
		if frac[0] != '.' || n < 1 || n > 9 {
			return t, false
		}
		if nsec = digitsAt(frac, 1, n); nsec < 0 {
			return t, false
		}
		for ; n < 9; n++ {
			nsec *= 10
		}
	}
	// As time.Date(year, month, day, hour, minute, sec, nsec, time.UTC)
	// makes it, bit for bit, without its normalising: the fields are valid.
	unix := unixDays(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(unix, int64(nsec)).UTC(), true
}

// unixDays is the number of days from 1970-01-01 to a valid date of the
// years 0 to 9999, in the proleptic Gregorian calendar as time.Date counts
// them (the civil-from-days algorithm, read backwards: years begin in
// March, so that a leap day ends its year).
func unixDays(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := 0
	if year < 0 {
		era, year = -1, year+400
	}
	era += year / 400
	yoe := year % 400
	doy := (153*((month+9)%12)+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// two reads the decimal digits a and b, or is below -9999 (so that a
// year made of two of them is negative too) if they are not.
func two(a, b byte) int {
	if a -= '0'; a > 9 {
		return -100000
	}
	if b -= '0'; b > 9 {
		return -100000
	}
	return int(a)*10 + int(b)
}

// digitsAt reads the n decimal digits of s at i, -1 if they are not.
func digitsAt(s string, i, n int) int {
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c -= '0'; c > 9 {
			return -1
		}
		v = v*10 + int(c)
	}
	return v
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// skip validates and skips one value.
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.s) {
		return false
	}
	switch c := s.s[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{':
		return s.object(func(string) bool { return s.skip() })
	case c == '[':
		return s.array()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range [...]string{"null", "true", "false"} {
		if strings.HasPrefix(s.s[s.i:], lit) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

func (s *scanner) array() bool {
	s.i++
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.ws()
	if s.byte(']') {
		s.depth--
		return true
	}
	for {
		if !s.skip() {
			return false
		}
		s.ws()
		if s.byte(']') {
			s.depth--
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// number skips a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.digits() == 0:
		return false
	}
	if s.byte('.') && s.digits() == 0 {
		return false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.s) && s.s[s.i] >= '0' && s.s[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
