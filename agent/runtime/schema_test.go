package runtime

import (
	"bytes"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schemas live with the Python package (src/faascope/schemas) so both languages test
// against the same files.
var (
	schemaOnce                sync.Once
	requestSchema, respSchema *jsonschema.Schema
	schemaErr                 error
)

func schemas(t testing.TB) (req, resp *jsonschema.Schema) {
	t.Helper()
	schemaOnce.Do(func() {
		dir, err := filepath.Abs(filepath.Join("..", "..", "src", "faascope", "schemas"))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if requestSchema, schemaErr = c.Compile(filepath.Join(dir, "agent-request.schema.json")); schemaErr != nil {
			return
		}
		respSchema, schemaErr = c.Compile(filepath.Join(dir, "agent-response.schema.json"))
	})
	if schemaErr != nil {
		t.Fatalf("compiling schemas: %v", schemaErr)
	}
	return requestSchema, respSchema
}

func validate(s *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

func mustValidateResponse(t *testing.T, body []byte) {
	t.Helper()
	_, resp := schemas(t)
	if err := validate(resp, body); err != nil {
		t.Fatalf("response does not match agent-response.schema.json: %v\n%s", err, body)
	}
}
