package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faascope/faascope/agent/workloads"
)

func TestDecodeRequestRejects(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	req, _ := schemas(t)
	cases := []struct {
		payload string
		field   string // the message must start with "<field>: "
		// goOnly marks rules JSON Schema cannot express (comparisons between fields, the
		// file system); everything else must be rejected by the schema too.
		goOnly bool
	}{
		{``, "request", false},
		{`not json`, "request", false},
		{`[]`, "request", false},
		{`null`, "request", false},
		{`{"workload": {"kind": "noop"}} {}`, "request", false},
		{`{"workload": {"kind": "noop"}`, "request", false},
		{`{}`, "workload", false},
		{`{"workload": null}`, "workload", false},
		{`{"workload": "noop"}`, "workload", false},
		{`{"workload": {"kind": "noop"}, "extra": 1}`, "extra", false},
		{`{"Workload": {"kind": "noop"}}`, "Workload", false},
		{`{"workload": {}}`, "workload.kind", false},
		{`{"workload": {"kind": 3}}`, "workload.kind", false},
		{`{"workload": {"kind": null}}`, "workload.kind", false},
		{`{"workload": {"kind": "sleep"}}`, "workload.kind", false},
		{`{"workload": {"kind": "noop", "iterations": 1}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin"}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "iterations": "10"}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "iterations": 1.5}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "iterations": 0}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "iterations": 1000000000001}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "iterations": 1e400}}`, "workload.iterations", false},
		{`{"workload": {"kind": "spin", "Iterations": 5}}`, "workload.Iterations", false},
		{`{"workload": {"kind": "fileio", "file_size": 1, "io_size": 1}}`, "workload.op", false},
		{`{"workload": {"kind": "fileio", "op": "append", "file_size": 1, "io_size": 1}}`, "workload.op", false},
		{`{"workload": {"kind": "fileio", "op": "write", "io_size": 1}}`, "workload.file_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": -1, "io_size": 1}}`, "workload.file_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 68719476737, "io_size": 1}}`, "workload.file_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": "1MiB", "io_size": 1}}`, "workload.file_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 512}}`, "workload.io_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 512, "io_size": 1024}}`, "workload.io_size", true},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 1000, "direct": true}}`, "workload.io_size", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "direct": "yes"}}`, "workload.direct", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "direct": null}}`, "workload.direct", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "engine": "aio"}}`, "workload.engine", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "engine": ""}}`, "workload.engine", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "engine": "dd", "pattern": "random"}}`, "workload.pattern", false},
		{`{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512, "fsync": "end"}}`, "workload.fsync", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "source": "random"}}`, "workload.source", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": "/etc/passwd"}}`, "workload.path", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": "../x"}}`, "workload.path", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": "a/../../x"}}`, "workload.path", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": ""}}`, "workload.path", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": "no/such/dir"}}`, "workload.path", true},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "seed": 0.5}}`, "workload.seed", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "prepare": 1}}`, "workload.prepare", false},
		{`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "bs": 512}}`, "workload.bs", false},
	}
	for _, c := range cases {
		_, _, err := DecodeRequest([]byte(c.payload))
		var e *workloads.Error
		if !errors.As(err, &e) || e.Type != workloads.InvalidRequest || !strings.HasPrefix(e.Message, c.field+": ") {
			t.Errorf("%s\n  got %v, want InvalidRequest naming %s", c.payload, err, c.field)
		}
		if schemaErr := validate(req, []byte(c.payload)); schemaErr == nil && !c.goOnly {
			t.Errorf("%s\n  the request schema accepts what the agent rejects", c.payload)
		} else if schemaErr != nil && c.goOnly {
			t.Errorf("%s\n  marked Go-only but the schema rejects it too: %v", c.payload, schemaErr)
		}
	}
}

func TestDecodeRequestAccepts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	req, _ := schemas(t)
	for _, p := range []string{
		`{"workload": {"kind": "noop"}}`,
		` {"workload":{"kind":"spin","iterations":1}} `,
		`{"workload": {"kind": "spin", "iterations": 1e3}}`,
		`{"workload": {"kind": "spin", "iterations": 2.0}}`,
		`{"workload": {"kind": "spin", "iterations": 1000000000000}}`,
		`{"workload": {"kind": "fileio", "op": "write", "file_size": 1, "io_size": 1}}`,
		`{"workload": {"kind": "fileio", "engine": "dd", "op": "write", "pattern": "sequential", "file_size": 10000, "io_size": 512, "direct": true, "fsync": "every", "source": "urandom", "path": "sub/f.dat", "prepare": false, "drop": true, "seed": -5}}`,
		`{"workload": {"kind": "fileio", "op": "read", "pattern": "random", "file_size": 68719476736, "io_size": 1073741824, "fsync": "none", "seed": 9223372036854775807}}`,
		`{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 4096, "direct": false, "path": "./x/../y"}}`,
	} {
		w, kind, err := DecodeRequest([]byte(p))
		if err != nil {
			// ./x/../y contains "..": rejected by design, and by the schema.
			if strings.Contains(p, "x/../y") {
				if validate(req, []byte(p)) == nil {
					t.Errorf("%s: schema accepts a path with ..", p)
				}
				continue
			}
			t.Errorf("%s: %v", p, err)
			continue
		}
		if w == nil || kind == "" {
			t.Errorf("%s: no workload", p)
		}
		if err := validate(req, []byte(p)); err != nil {
			t.Errorf("%s: the schema rejects what the agent accepts: %v", p, err)
		}
	}
}

func TestDecodeRequestDefaults(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	w, _, err := DecodeRequest([]byte(`{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := w.(*workloads.FileIO)
	if f.Engine != "native" || f.Pattern != "sequential" || f.Fsync != "none" || f.Source != "zero" ||
		f.Path != workloads.DefaultPath || f.Direct || !*f.Prepare || !*f.Drop || f.Seed != 0 {
		t.Errorf("defaults: %+v prepare=%v drop=%v", f, *f.Prepare, *f.Drop)
	}
	w, _, _ = DecodeRequest([]byte(`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512}}`))
	if f := w.(*workloads.FileIO); *f.Prepare || *f.Drop {
		t.Errorf("write defaults: prepare=%v drop=%v", *f.Prepare, *f.Drop)
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"workload": {"kind": "noop"}}`,
		`{"workload": {"kind": "spin", "iterations": 12345}}`,
		`{"workload": {"kind": "spin", "iterations": 1e3}}`,
		`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "direct": true}}`,
		`{"workload": {"kind": "fileio", "engine": "dd", "op": "read", "file_size": 10000, "io_size": 512, "path": "a.dat", "seed": 3}}`,
		`{"workload": {"kind": "fileio", "op": "read", "pattern": "random", "file_size": 1, "io_size": 1, "prepare": false, "drop": true}}`,
		`{"workload": {"kind": "fileio", "op": "write", "file_size": 4096, "io_size": 512, "path": "../x"}}`,
		`{"workload": {"kind": "fileio", "op": "write", "fsync": "every", "source": "urandom", "file_size": 4096, "io_size": 4096}}`,
		`{"workload": null}`,
		`[1, 2]`,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	if err := os.Setenv("TMPDIR", dir); err != nil {
		f.Fatal(err)
	}
	defer os.Unsetenv("TMPDIR")
	req, _ := schemas(f)
	f.Fuzz(func(t *testing.T, payload []byte) {
		w, _, err := DecodeRequest(payload)
		if err != nil {
			var e *workloads.Error
			if !errors.As(err, &e) || e.Type == "" || e.Message == "" {
				t.Fatalf("unstructured error %T %v", err, err)
			}
			return
		}
		if w == nil {
			t.Fatal("accepted without a workload")
		}
		if err := validate(req, payload); err != nil {
			t.Fatalf("accepted %q but the schema rejects it: %v", payload, err)
		}
	})
}

func TestEmbeddedParameterGroupsArePromotedLikeEncodingJSON(t *testing.T) {
	got := jsonFields(&workloads.Object{})
	for _, name := range []string{"region", "access_key_id", "session_token", "max_attempts", "retry_mode", "max_backoff_ms", "timeout_ms", "bucket"} {
		if !got[name] {
			t.Errorf("object accepts %q at the top level of the request", name)
		}
	}
	for _, name := range []string{"AWSAccess", "RetryParams", "aws_access", "retry_params"} {
		if got[name] {
			t.Errorf("the embedded group's own name %q must not be a request field", name)
		}
	}
	if app := jsonFields(&workloads.App{}); !app["path_style"] || app["retry_mode"] {
		t.Errorf("app takes the blob parameters but no retry mode: %v", app)
	}
}
