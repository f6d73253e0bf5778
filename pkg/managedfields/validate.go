package managedfields

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ValidateFieldsV1 checks that raw is a FieldsV1 trie: nested JSON objects
// whose keys are "." or path elements fieldpath can read (f:, k:, v:, i:).
// fieldpath.Set.FromJSON silently drops keys of unknown types; a dump with
// such keys was damaged, and the ownership read from it would be wrong, so
// this reports the first bad key with its place in the trie.
func ValidateFieldsV1(raw []byte) error {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err == nil && m != nil {
		return validateFieldsMapIn(m, nil, true, true)
	}
	return validateTokens(raw)
}

// checkDecoded reports keys fieldpath.Set.FromJSON dropped while decoding
// raw into s. What the API server writes is exactly what s.ToJSON writes
// back, so the check is one serialization in the common case.
func checkDecoded(raw []byte, s *fieldpath.Set) error {
	if back, err := s.ToJSON(); err == nil && bytes.Equal(back, raw) {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return validateTokens(raw)
	}
	return validateFieldsMap(m, nil)
}

// validateTokens reads raw token by token to say where it goes wrong.
func validateTokens(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := validateObject(dec, nil); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the FieldsV1 object")
	}
	return nil
}

func validateObject(dec *json.Decoder, where []string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%sinvalid JSON: %w", at(where), err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("%swant a JSON object, got %v", at(where), describeToken(tok))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%sinvalid JSON: %w", at(where), err)
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("%sinvalid JSON key %v", at(where), tok)
		}
		if key != "." {
			if _, err := fieldpath.DeserializePathElement(key); err != nil {
				return fmt.Errorf("%sinvalid key %q: want f:<field>, k:<keys>, v:<value>, i:<index> or \".\"", at(where), key)
			}
		}
		if err := validateObject(dec, append(where, key)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%sinvalid JSON: %w", at(where), err)
	}
	return nil
}

func at(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return "under " + strings.Join(where, " > ") + ": "
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return string(t)
	case string:
		return fmt.Sprintf("the string %q", t)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// validateFieldsMap is ValidateFieldsV1 for a FieldsV1 trie already decoded
// into an unstructured map.
func validateFieldsMap(m map[string]any, where *chain) error {
	if err := validateFieldsMapIn(m, where, false, false); err != nil {
		// Report the first bad key in order, so that the message is stable.
		return validateFieldsMapIn(m, where, true, true)
	}
	return nil
}

// validateFieldsMapIn checks keys; strict deserializes every key, not only
// those of unknown types, to name bad k: and v: keys too.
func validateFieldsMapIn(m map[string]any, where *chain, sorted, strict bool) error {
	if !sorted {
		for key, v := range m {
			if err := validateFieldsKey(key, v, where, sorted, strict); err != nil {
				return err
			}
		}
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if err := validateFieldsKey(key, m[key], where, sorted, strict); err != nil {
			return err
		}
	}
	return nil
}

func validateFieldsKey(key string, v any, where *chain, sorted, strict bool) error {
	if key != "." && (strict || !knownKeyType(key)) {
		if _, err := fieldpath.DeserializePathElement(key); err != nil {
			return fmt.Errorf("%sinvalid key %q: want f:<field>, k:<keys>, v:<value>, i:<index> or \".\"", at(where.keys()), key)
		}
	}
	here := chain{parent: where, key: key}
	sub, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%swant a JSON object, got %s", at(here.keys()), describeValue(v))
	}
	return validateFieldsMapIn(sub, &here, sorted, strict)
}

// chain is the path of keys down to a map, built on the stack as the
// validation descends and turned into a slice only for an error.
type chain struct {
	parent *chain
	key    string
}

func (c *chain) keys() []string {
	if c == nil {
		return nil
	}
	return append(c.parent.keys(), c.key)
}

func describeValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", t)
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}

// knownKeyType reports whether key has a type fieldpath.Set.FromJSON reads
// (and whose content it checks itself); it drops keys of other types.
func knownKeyType(key string) bool {
	return len(key) >= 2 && key[1] == ':' && (key[0] == 'f' || key[0] == 'k' || key[0] == 'v' || key[0] == 'i')
}
