package managedfields

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// ValidateFieldsV1 checks that raw is a FieldsV1 trie: nested JSON objects
// whose keys are "." or path elements fieldpath can read (f:, k:, v:, i:).
// fieldpath.Set.FromJSON silently drops keys of unknown types; a dump with
// such keys was damaged, and the ownership read from it would be wrong, so
// this reports the first bad key with its place in the trie.
func ValidateFieldsV1(raw []byte) error {
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
