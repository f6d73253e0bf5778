// Package osfake is a local HTTP server that speaks the part of
// OpenSearch's REST API that kubectl rv conflicts --source opensearch:
// uses, over an index given as a function: create a point in time (POST
// /INDEX/_search/point_in_time?keep_alive=TIME), search it (POST or GET
// /_search, a JSON body with pit, query, sort, size, search_after),
// delete it (DELETE /_search/point_in_time, a JSON body with pit_id).
//
// It refuses what OpenSearch refuses, in OpenSearch's words: a point in
// time without keep_alive, a search naming an index or another point in
// time, a sort on anything but _shard_doc (or on _shard_doc at all when
// Version is before 3.3, which added it), a size over the index's
// max_result_window (10,000), a body that is not JSON, a path or method
// it has no handler for, wrong credentials. The query is read as
// pkg/audit/pitsearch.Query writes it: a bool filter of bool should
// clauses of match queries and of ranges on requestReceivedTimestamp.
//
// Only tests import it.
package osfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/kubectl-rv/kubectl-rv/internal/pitquery"
)

// Doc is one document of the index.
type Doc struct {
	// Fields are the values the query may name (verb, stage,
	// requestReceivedTimestamp).
	Fields map[string]string
	// Source is the document as indexed: an audit event's JSON.
	Source string
}

// Server serves one index.
type Server struct {
	// Index is the index's name; another is index_not_found_exception.
	Index string
	// N is how many documents the index has; Doc(i) is document i (a
	// formula, so that an index of millions takes no memory).
	N   int
	Doc func(i int) Doc
	// Version is the OpenSearch version the server says it is; before
	// 3.3 it refuses a sort on _shard_doc. Empty is 3.3.0.
	Version string
	// User and Password, when set, are the only basic credentials
	// accepted.
	User, Password string
	// Garble, when not nil, says which searches (counted from 1) are
	// answered with half a JSON document.
	Garble func(search int) bool

	// mu guards the fields below.
	mu                       sync.Mutex
	opened, closed, searches int
	afters, ranged, sent     int
	pit                      string
	refused                  []string
}

// Counts are what the server saw.
type Counts struct {
	// Opened and Closed count points in time; Searches the searches,
	// Afters those with search_after, Ranged those with a time range.
	Opened, Closed, Searches, Afters, Ranged int
	// Sent counts the documents sent.
	Sent int
	// Refused are the requests refused, as METHOD PATH: REASON.
	Refused []string
}

// Counts returns what the server saw so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{s.opened, s.closed, s.searches, s.afters, s.ranged, s.sent, append([]string(nil), s.refused...)}
}

var timeValue = regexp.MustCompile(`^[0-9]+(d|h|m|s|ms|micros|nanos)$`)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	s.mu.Lock()
	defer s.mu.Unlock()
	if user, pass, _ := r.BasicAuth(); s.User != "" && (user != s.User || pass != s.Password) {
		s.refuse(w, r, http.StatusUnauthorized, "", "Unauthorized")
		return
	}
	body, _ := io.ReadAll(r.Body)
	if len(body) > 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.refuse(w, r, http.StatusNotAcceptable, "", fmt.Sprintf("Content-Type header [%s] is not supported", r.Header.Get("Content-Type")))
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/_search/point_in_time") && path != "/_search/point_in_time":
		s.create(w, r, strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/_search/point_in_time"))
	case r.Method == http.MethodDelete && path == "/_search/point_in_time":
		s.delete(w, r, body)
	case (r.Method == http.MethodPost || r.Method == http.MethodGet) && path == "/_search":
		s.search(w, r, body)
	case (r.Method == http.MethodPost || r.Method == http.MethodGet) && strings.HasSuffix(path, "/_search"):
		s.refuse(w, r, http.StatusBadRequest, "illegal_argument_exception", "[indices] cannot be used with point in time. Do not specify any index with point in time.")
	default:
		s.refuse(w, r, http.StatusBadRequest, "", fmt.Sprintf("no handler found for uri [%s] and method [%s]", r.URL.RequestURI(), r.Method))
	}
}

// refuse answers an error as OpenSearch does: {"error": {"type",
// "reason"}, "status"}, or {"error": "TEXT", "status"} without a type.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, typ, reason string) {
	s.refused = append(s.refused, r.Method+" "+r.URL.Path+": "+reason)
	w.WriteHeader(status)
	var e any = reason
	if typ != "" {
		e = map[string]any{"root_cause": []map[string]string{{"type": typ, "reason": reason}}, "type": typ, "reason": reason}
	}
	b, _ := json.Marshal(map[string]any{"error": e, "status": status})
	_, _ = w.Write(b)
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, index string) {
	keep := r.URL.Query().Get("keep_alive")
	switch {
	case index != s.Index:
		s.refuse(w, r, http.StatusNotFound, "index_not_found_exception", fmt.Sprintf("no such index [%s]", index))
	case keep == "":
		s.refuse(w, r, http.StatusBadRequest, "action_request_validation_exception", "Validation Failed: 1: keep alive not specified;")
	case !timeValue.MatchString(keep):
		s.refuse(w, r, http.StatusBadRequest, "illegal_argument_exception", fmt.Sprintf("failed to parse setting [keep_alive] with value [%s] as a time value", keep))
	default:
		s.opened++
		s.pit = fmt.Sprintf("o463QQEPbXktaW5kZXgtMDAwMDAx%d", s.opened)
		b, _ := json.Marshal(map[string]any{"pit_id": s.pit, "_shards": map[string]int{"total": 1, "successful": 1}, "creation_time": 1764237600000})
		_, _ = w.Write(b)
	}
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, body []byte) {
	var b struct {
		PitID []string `json:"pit_id"`
	}
	if err := json.Unmarshal(body, &b); err != nil || len(b.PitID) == 0 {
		s.refuse(w, r, http.StatusBadRequest, "action_request_validation_exception", "Validation Failed: 1: no pit ids specified;")
		return
	}
	var pits []map[string]any
	for _, id := range b.PitID {
		ok := id == s.pit && s.pit != ""
		if ok {
			s.closed++
			s.pit = ""
		}
		pits = append(pits, map[string]any{"pit_id": id, "successful": ok})
	}
	out, _ := json.Marshal(map[string]any{"pits": pits})
	_, _ = w.Write(out)
}

// check is OpenSearch's refusal of the search, or "".
func (s *Server) check(b *pitquery.Body) (typ, reason string) {
	switch {
	case b.Pit == nil || b.Pit.ID == "":
		return "illegal_argument_exception", "this reader searches a point in time: no pit in the body"
	case b.Pit.ID != s.pit:
		return "search_context_missing_exception", "No search context found for id [" + b.Pit.ID + "]"
	case b.Pit.KeepAlive != "" && !timeValue.MatchString(b.Pit.KeepAlive):
		return "illegal_argument_exception", "failed to parse [pit.keep_alive]"
	case len(b.Sort) != 1 || len(b.Sort[0]) != 1 || b.Sort[0]["_shard_doc"] == "":
		return "illegal_argument_exception", "this reader sorts by _shard_doc alone"
	case s.Version != "" && !atLeast(s.Version, 3, 3):
		return "query_shard_exception", "No mapping found for [_shard_doc] in order to sort on"
	case b.Sort[0]["_shard_doc"] != "asc":
		return "illegal_argument_exception", "this reader sorts by _shard_doc ascending"
	case b.Size == nil || *b.Size > 10000:
		return "illegal_argument_exception", "Result window is too large, from + size must be less than or equal to: [10000]"
	case len(b.SearchAfter) > 1:
		return "illegal_argument_exception", "search_after has 2 value(s) but sort has 1."
	}
	return "", ""
}

func (s *Server) search(w http.ResponseWriter, r *http.Request, body []byte) {
	var b pitquery.Body
	if err := json.Unmarshal(body, &b); err != nil {
		s.refuse(w, r, http.StatusBadRequest, "parsing_exception", "the body is not a search: "+err.Error())
		return
	}
	if typ, reason := s.check(&b); reason != "" {
		status := http.StatusBadRequest
		if typ == "search_context_missing_exception" {
			status = http.StatusNotFound
		}
		s.refuse(w, r, status, typ, reason)
		return
	}
	s.searches++
	from := 0
	if len(b.SearchAfter) == 1 {
		s.afters++
		from = b.SearchAfter[0] + 1
	}
	type hit struct {
		Index  string          `json:"_index"`
		ID     string          `json:"_id"`
		Score  *float64        `json:"_score"`
		Source json.RawMessage `json:"_source"`
		Sort   []int           `json:"sort"`
	}
	hits := []hit{}
	ranged := false
	for i := from; i < s.N && len(hits) < *b.Size; i++ {
		d := s.Doc(i)
		ok, rg := b.Matches(d.Fields)
		ranged = ranged || rg
		if ok {
			hits = append(hits, hit{s.Index, fmt.Sprint(i), nil, exclude(d.Source, b.Source.Excludes), []int{i}})
		}
	}
	if ranged {
		s.ranged++
	}
	s.sent += len(hits)
	out, _ := json.Marshal(map[string]any{"pit_id": s.pit, "took": 3, "timed_out": false, "_shards": map[string]int{"total": 1, "successful": 1}, "hits": map[string]any{"max_score": nil, "hits": hits}})
	if s.Garble != nil && s.Garble(s.searches) {
		out = out[:len(out)/2]
	}
	_, _ = w.Write(out)
}

// atLeast says whether version (MAJOR.MINOR.PATCH) is major.minor or
// later.
func atLeast(version string, major, minor int) bool {
	var ma, mi int
	_, _ = fmt.Sscanf(version, "%d.%d", &ma, &mi)
	return ma > major || ma == major && mi >= minor
}

// exclude is source without its top-level fields named in excludes, as
// _source.excludes sends it.
func exclude(source string, excludes []string) json.RawMessage {
	if len(excludes) == 0 {
		return json.RawMessage(source)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(source), &m) != nil {
		return json.RawMessage(source)
	}
	for _, k := range excludes {
		delete(m, k)
	}
	b, _ := json.Marshal(m)
	return b
}
