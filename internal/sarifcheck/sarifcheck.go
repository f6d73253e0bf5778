// Package sarifcheck validates SARIF logs against the published SARIF
// 2.1.0 JSON schema, vendored in testdata/ from the OASIS sarif-spec
// repository (sarif-2.1/schema/sarif-schema-2.1.0.json, with the
// repository's licence terms in testdata/LICENSE.md), with
// github.com/santhosh-tekuri/jsonschema. Formats (uri, uri-reference,
// date-time) are asserted, not only annotated.
//
// Only tests import it: the unit tests of pkg/output/cireport and the e2e
// tests of the commands' -o sarif.
package sarifcheck

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed testdata/sarif-schema-2.1.0.json
var schemaJSON []byte

// schemaURL is the schema's id, under which it is compiled.
const schemaURL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("reading the SARIF schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// Validate returns an error, with every violation, unless log is a SARIF
// 2.1.0 log the schema accepts.
func Validate(log []byte) error {
	sch, err := compiled()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}
