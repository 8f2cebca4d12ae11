package platform

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The Runtime API as third-party runtimes use it (issue #15): each test deploys testdata/probe,
// a custom runtime whose payload says what to do, and checks what the platform made of it.

var (
	probeOnce sync.Once
	probeBin  string
	probeErr  error
)

// probe is the package of testdata/probe plus the extra files given.
func probe(t *testing.T, extra map[string][]byte) []byte {
	t.Helper()
	probeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "faascope-probe")
		if err != nil {
			probeErr = err
			return
		}
		probeBin = filepath.Join(dir, "bootstrap")
		build := exec.Command("go", "build", "-o", probeBin, "./testdata/probe")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("build probe: %v\n%s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return zipOf(map[string]string{"bootstrap": probeBin}, extra)
}

func (tp *testPlatform) createProbe(name string, extra map[string]any, files map[string][]byte) {
	tp.t.Helper()
	req := map[string]any{"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(probe(tp.t, files))}}
	for k, v := range extra {
		req[k] = v
	}
	tp.create(name, req)
}

// invokeDirect calls the platform's core as the API does, so a test sets what the API would
// (a client context) without going through HTTP.
func (tp *testPlatform) invokeDirect(req InvokeRequest) (result, invokeMeta) {
	tp.t.Helper()
	res, meta, err := tp.Invoke(context.Background(), req)
	if err != nil {
		tp.t.Fatal(err)
	}
	return res, meta
}

func decodeMap(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object of strings: %s", b)
	}
	return m
}

func TestRuntimeThatExitsAfterAnsweringIsNeverReused(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createProbe("quitter", nil, nil)
	for i := 0; i < 4; i++ {
		// aws-lambda-go after a panic: posts /error, then exits.
		res, meta := tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"exit-after-answer"}`)})
		if res.FuncError != "Unhandled" || !json.Valid(res.Payload) || string(res.Payload) == "" ||
			decodeMap(t, res.Payload)["errorType"] != "Runtime.Panic" {
			t.Fatalf("invocation %d: want the runtime's own error, got %s", i, res.Payload)
		}
		if !meta.Cold {
			t.Fatalf("invocation %d: the runtime before it exited, so this one must be a cold start", i)
		}
		// And one that answers, then exits with status 0.
		res, meta = tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"exit-after-success"}`)})
		if res.FuncError != "" || string(res.Payload) != `{"ok":true}` || !meta.Cold {
			t.Fatalf("invocation %d after an exit: want a cold success, got cold=%v %s", i, meta.Cold, res.Payload)
		}
	}
	// Exits 300 ms after answering: the next invocation is already waiting to be handed over
	// when the process goes, and moves to a fresh instance instead of failing.
	tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"exit-later"}`)})
	res, meta := tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"noop"}`)})
	if res.FuncError != "" || !meta.Cold {
		t.Fatalf("after an exit during the hand-over: want a cold success, got cold=%v %s", meta.Cold, res.Payload)
	}
	// A warm instance that stays is still reused.
	tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"noop"}`)})
	if _, meta := tp.invokeDirect(InvokeRequest{Name: "quitter", Payload: []byte(`{"op":"noop"}`)}); meta.Cold {
		t.Fatal("a runtime that keeps running should be reused warm")
	}
	if n := len(tp.Instances()); n != 1 {
		t.Fatalf("exited instances must be gone from the platform, %d left", n)
	}
}
