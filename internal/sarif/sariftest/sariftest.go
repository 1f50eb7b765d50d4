// Package sariftest checks SARIF logs against the SARIF 2.1.0 schema (the
// subset convoy writes: sarif-2.1.0-subset.schema.json, a trimmed
// transcription of the OASIS schema; see its description).
package sariftest

import (
	"bytes"
	_ "embed"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed sarif-2.1.0-subset.schema.json
var schema []byte

const schemaURL = "https://convoy.invalid/sarif-2.1.0-subset.schema.json"

// Validate fails t unless data is a SARIF 2.1.0 log the schema accepts
// (formats asserted: URIs must be URIs).
func Validate(t testing.TB, data []byte) {
	t.Helper()
	if err := Check(data); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, data)
	}
}

// Check is Validate returning the error.
func Check(data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}
