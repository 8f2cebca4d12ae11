package workloads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/faascope/faascope/agent/runtime"
	"github.com/faascope/faascope/agent/workloads"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compile(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	s, err := jsonschema.NewCompiler().Compile(filepath.Join("..", "..", "src", "faascope", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func valid(s *jsonschema.Schema, doc []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// The storage and network workloads' requests: what the agent accepts the schema accepts, and
// what it rejects for a reason the schema can express, the schema rejects too.
func TestStorageRequestsAgreeWithSchema(t *testing.T) {
	shared := t.TempDir()
	t.Setenv("FAASCOPE_SHARED_DIR", shared)
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("FAASCOPE_S3_BUCKET", "")
	t.Setenv("FAASCOPE_REDIS_URL", "")
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "self")
	req := compile(t, "agent-request.schema.json")
	accept := []string{
		`{"kind": "object", "op": "put", "bucket": "b"}`,
		`{"kind": "object", "op": "get", "bucket": "b", "object_size": 5368709120, "count": 1000000, "parallelism": 1024, "prefix": "p/", "index": 3, "endpoint": "http://127.0.0.1:9000", "region": "eu-west-1", "path_style": false, "access_key_id": "a", "secret_access_key": "s", "session_token": "t", "max_attempts": 5, "retry_mode": "adaptive", "max_backoff_ms": 100, "timeout_ms": 0, "checksum": "when_supported", "source": "urandom", "prepare": false, "drop": true, "on_error": "count"}`,
		`{"kind": "kv", "op": "put", "endpoint": "redis://127.0.0.1:6379/0", "item_size": 409600, "max_attempts": 2, "retry_mode": "standard"}`,
		`{"kind": "kv", "op": "get", "backend": "dynamodb", "table": "t", "consistent_read": true, "endpoint": "http://127.0.0.1:8000", "region": "us-east-1"}`,
		`{"kind": "sharedfs", "op": "write", "file_size": 4096, "io_size": 512, "mode": "shared", "index": 7, "direct": true}`,
		`{"kind": "sharedfs", "op": "write", "file_size": 4096, "io_size": 512, "engine": "dd", "path": "x.dat"}`,
		`{"kind": "network", "sink": "127.0.0.1:9100", "direction": "both", "connections": 4, "bytes": 0, "duration_ms": 100, "interval_ms": 1, "io_size": 1, "timeout_ms": 10}`,
		`{"kind": "transfer"}`,
		`{"kind": "transfer", "via": "object", "bucket": "b", "chain_length": 5, "payload_size": 1073741824, "lambda_endpoint": "http://127.0.0.1:9002", "max_attempts": 2}`,
		`{"kind": "transfer", "via": "kv", "endpoint": "redis://h:1/0", "hop": 1, "key": "k", "session": "abc", "invoked_ns": 5}`,
		`{"kind": "transfer", "hop": 1, "payload_size": 1, "payload": "a", "session": "s"}`,
		`{"kind": "app", "shape": "sort", "storage": "tmp", "input_size": 1000}`,
		`{"kind": "app", "shape": "inference", "storage": "sharedfs", "layers": 2, "input_size": 8192, "output_size": 10}`,
		`{"kind": "app", "shape": "video", "bucket": "b", "endpoint": "http://127.0.0.1:1", "prefix": "x/", "seed": -3, "prepare": false, "drop": false}`,
	}
	for _, w := range accept {
		p := []byte(`{"workload": ` + w + `}`)
		if _, _, err := runtime.DecodeRequest(p); err != nil {
			t.Errorf("agent rejects %s: %v", w, err)
		}
		if err := valid(req, p); err != nil {
			t.Errorf("schema rejects %s: %v", w, err)
		}
	}
	reject := []struct {
		w, field string
		goOnly   bool
	}{
		{`{"kind": "object", "op": "put"}`, "workload.bucket", true},
		{`{"kind": "object", "op": "put", "bucket": "b", "count": 0}`, "workload.count", false},
		{`{"kind": "object", "op": "put", "bucket": "b", "parallelism": 0}`, "workload.parallelism", false},
		{`{"kind": "object", "op": "put", "bucket": "b", "max_attempts": 0}`, "workload.max_attempts", false},
		{`{"kind": "object", "op": "put", "bucket": "b", "api": "gcs"}`, "workload.api", true},
		{`{"kind": "object", "op": "list", "bucket": "b"}`, "workload.op", false},
		{`{"kind": "object", "op": "put", "bucket": "b", "endpoint": "s3.example"}`, "workload.endpoint", false},
		{`{"kind": "object", "op": "put", "bucket": "b", "key": "x"}`, "workload.key", false},
		{`{"kind": "kv", "op": "put", "endpoint": "redis://h:1", "table": "t"}`, "workload.backend", false},
		{`{"kind": "kv", "op": "put", "endpoint": "redis://h:1", "item_size": 409601}`, "workload.item_size", false},
		{`{"kind": "sharedfs", "op": "write", "file_size": 1, "io_size": 1, "root": "/etc"}`, "workload.root", true},
		{`{"kind": "sharedfs", "op": "write", "file_size": 1, "io_size": 1, "mode": "shared", "drop": true}`, "workload.drop", false},
		{`{"kind": "sharedfs", "op": "write", "file_size": 1, "io_size": 1, "mode": "shared", "engine": "dd"}`, "workload.engine", false},
		{`{"kind": "network", "sink": "h:1", "interval_ms": 0}`, "workload.interval_ms", false},
		{`{"kind": "network", "sink": "nohost"}`, "workload.sink", false},
		{`{"kind": "transfer", "payload": "x"}`, "workload.hop", false},
		{`{"kind": "transfer", "via": "inline", "bucket": "b"}`, "workload.via", false},
		{`{"kind": "transfer", "chain_length": 2, "hop": 2}`, "workload.hop", true},
		{`{"kind": "transfer", "payload_size": 6225921}`, "workload.payload_size", false},
		{`{"kind": "app", "shape": "sort", "storage": "tmp", "input_size": 150}`, "workload.input_size", false},
		{`{"kind": "app", "shape": "video", "storage": "tmp", "layers": 2}`, "workload.layers", false},
		{`{"kind": "app", "shape": "video", "storage": "tmp", "bucket": "b"}`, "workload.endpoint", false},
		{`{"kind": "app", "storage": "tmp"}`, "workload.shape", false},
	}
	for _, c := range reject {
		p := []byte(`{"workload": ` + c.w + `}`)
		_, _, err := runtime.DecodeRequest(p)
		var e *workloads.Error
		if !errors.As(err, &e) || e.Type != workloads.InvalidRequest || !strings.HasPrefix(e.Message, c.field+": ") {
			t.Errorf("%s: got %v, want InvalidRequest naming %s", c.w, err, c.field)
		}
		if serr := valid(req, p); serr == nil && !c.goOnly {
			t.Errorf("%s: the schema accepts what the agent rejects", c.w)
		} else if serr != nil && c.goOnly {
			t.Errorf("%s: marked Go-only but the schema rejects it: %v", c.w, serr)
		}
	}
}

// Real results of the workloads that need no server validate against the response schema.
func TestStorageResultsMatchSchema(t *testing.T) {
	t.Setenv("FAASCOPE_SHARED_DIR", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	resp := compile(t, "agent-response.schema.json")
	for _, w := range []string{
		`{"kind": "sharedfs", "op": "write", "file_size": 8192, "io_size": 4096, "mode": "shared", "index": 1}`,
		`{"kind": "sharedfs", "op": "read", "file_size": 8192, "io_size": 4096, "engine": "dd"}`,
		`{"kind": "app", "shape": "sort", "storage": "tmp", "input_size": 10000}`,
		`{"kind": "app", "shape": "inference", "storage": "sharedfs", "input_size": 8192}`,
		`{"kind": "transfer", "chain_length": 1, "payload_size": 10}`,
	} {
		wl, _, err := runtime.DecodeRequest([]byte(`{"workload": ` + w + `}`))
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		out, err := wl.Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		doc, _ := json.Marshal(map[string]any{"ok": true, "cold": false,
			"instance": map[string]any{"id": "x", "started_at": "t", "sandbox": "", "boot_id": "", "cpu_quota": nil,
				"memory_limit_bytes": nil, "hostname": "h", "arch": "amd64", "num_cpu": 1,
				"env": map[string]any{"function_name": nil, "memory_mb": nil, "log_stream": nil}},
			"timings":  map[string]any{"received_ns": 1, "workload_start_ns": 2, "workload_end_ns": 3},
			"workload": out, "error": nil})
		if err := valid(resp, doc); err != nil {
			t.Errorf("%s: %v\n%s", w, err, doc)
		}
	}
}

// requestSchemaFields reads agent-request.schema.json, the one source of the request contract:
// its workload kinds and, for each, the properties with the JSON type each takes ($ref followed;
// an enum or const takes the type of its values).
func requestSchemaFields(t *testing.T) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "src", "faascope", "schemas", "agent-request.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	defs := root["$defs"].(map[string]any)
	var typeOf func(where string, prop map[string]any) string
	typeOf = func(where string, prop map[string]any) string {
		if ty, ok := prop["type"].(string); ok {
			return ty
		}
		values, _ := prop["enum"].([]any)
		if c, ok := prop["const"]; ok {
			values = []any{c}
		}
		if len(values) > 0 {
			ty := jsonType(values[0])
			for _, v := range values[1:] {
				if jsonType(v) != ty {
					t.Errorf("%s: enum values of mixed types", where)
				}
			}
			return ty
		}
		if ref, ok := prop["$ref"].(string); ok {
			var node any = root
			for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				node = node.(map[string]any)[part]
			}
			return typeOf(where+" -> "+ref, node.(map[string]any))
		}
		t.Errorf("%s: no type, enum, const or $ref", where)
		return ""
	}
	out := map[string]map[string]string{}
	wl := defs["workload"].(map[string]any)
	for _, k := range wl["properties"].(map[string]any)["kind"].(map[string]any)["enum"].([]any) {
		kind := k.(string)
		def, ok := defs[kind].(map[string]any)
		if !ok {
			t.Errorf("workload kind %q has no $defs.%s", kind, kind)
			continue
		}
		fields := map[string]string{}
		for name, p := range def["properties"].(map[string]any) {
			fields[name] = typeOf(fmt.Sprintf("$defs.%s.properties.%s", kind, name), p.(map[string]any))
		}
		out[kind] = fields
	}
	// every kind of the enum is dispatched to its own $defs entry, and nothing else is
	for i, branch := range wl["allOf"].([]any) {
		b := branch.(map[string]any)
		kind := b["if"].(map[string]any)["properties"].(map[string]any)["kind"].(map[string]any)["const"].(string)
		if ref := b["then"].(map[string]any)["$ref"]; ref != "#/$defs/"+kind {
			t.Errorf("$defs.workload.allOf[%d]: kind %q dispatches to %v", i, kind, ref)
		}
		if _, ok := out[kind]; !ok {
			t.Errorf("$defs.workload.allOf[%d]: kind %q is not in the kind enum", i, kind)
		}
	}
	return out
}

func jsonType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// The Go decoder and the request schema name the same kinds, and for each kind the same JSON
// fields with the same types: a kind or field added on one side only fails here (and in
// tests/test_schemas.py, which checks the Python spec models against the same schema).
func TestDecoderAgreesWithRequestSchema(t *testing.T) {
	schema := requestSchemaFields(t)
	decoder := runtime.RequestFields()
	kinds := func(m map[string]map[string]string) []string {
		ks := make([]string, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if s, d := kinds(schema), kinds(decoder); !reflect.DeepEqual(s, d) {
		t.Fatalf("workload kinds differ: schema %v, Go decoder %v", s, d)
	}
	for _, kind := range kinds(schema) {
		s, d := schema[kind], decoder[kind]
		for name, ty := range s {
			switch goTy, ok := d[name]; {
			case !ok:
				t.Errorf("%s.%s is in the schema but the Go decoder does not accept it", kind, name)
			case goTy != ty:
				t.Errorf("%s.%s: the schema says %s, the Go decoder decodes %s", kind, name, ty, goTy)
			}
		}
		for name := range d {
			if _, ok := s[name]; !ok {
				t.Errorf("%s.%s is accepted by the Go decoder but missing from the schema", kind, name)
			}
		}
	}
}
