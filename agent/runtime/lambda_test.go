package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRuntimeAPI imitates Lambda's Runtime API: it hands out queued payloads on /next and
// records what the runtime posts back. When the queue is empty it cancels the runtime's
// context, which is how the test ends the loop.
type fakeRuntimeAPI struct {
	t        *testing.T
	mu       sync.Mutex
	queue    []string
	cancel   context.CancelFunc
	answers  map[string][]byte // request id -> response body
	errors   map[string]map[string]string
	initErr  map[string]string
	errHdr   string
	deadline int64
}

func (f *fakeRuntimeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	const prefix = "/2018-06-01/runtime/"
	path := strings.TrimPrefix(r.URL.Path, prefix)
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodGet && path == "invocation/next":
		if len(f.queue) == 0 {
			f.cancel()
			w.WriteHeader(http.StatusGone)
			return
		}
		id := "req-" + strconv.Itoa(len(f.answers)+len(f.errors))
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", id)
		w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(f.deadline, 10))
		_, _ = io.WriteString(w, f.queue[0])
		f.queue = f.queue[1:]
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/response"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "invocation/"), "/response")
		f.answers[id] = body
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/error"):
		var e map[string]string
		if err := json.Unmarshal(body, &e); err != nil {
			f.t.Errorf("error body is not JSON: %s", body)
		}
		f.errHdr = r.Header.Get("Lambda-Runtime-Function-Error-Type")
		if path == "init/error" {
			f.initErr = e
		} else {
			f.errors[strings.TrimSuffix(strings.TrimPrefix(path, "invocation/"), "/error")] = e
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		f.t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
	}
}

func newFakeRuntimeAPI(t *testing.T, payloads ...string) (*fakeRuntimeAPI, string, context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	f := &fakeRuntimeAPI{t: t, queue: payloads, cancel: cancel, answers: map[string][]byte{},
		errors: map[string]map[string]string{}, deadline: time.Now().Add(time.Minute).UnixMilli()}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, strings.TrimPrefix(srv.URL, "http://"), ctx
}

func TestLambdaLoop(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "faascope-test")
	t.Setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")
	t.Setenv("AWS_LAMBDA_LOG_STREAM_NAME", "2024/01/01/[$LATEST]abc")
	fake, api, ctx := newFakeRuntimeAPI(t,
		`{"workload": {"kind": "noop"}}`,
		`{"workload": {"kind": "spin", "iterations": 1000}}`,
		`{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512, "prepare": false}}`,
		`{"workload": {"kind": "bogus"}}`,
	)
	err := RunLambda(ctx, api, func() (*Handler, error) { return NewHandler(io.Discard) }, io.Discard)
	if err != nil {
		t.Fatalf("RunLambda: %v", err)
	}
	if len(fake.errors) != 0 || fake.initErr != nil {
		t.Fatalf("workload failures must be responses, not runtime errors: %v %v", fake.errors, fake.initErr)
	}
	if len(fake.answers) != 4 {
		t.Fatalf("%d responses, want 4", len(fake.answers))
	}
	want := []struct {
		ok      bool
		errType string
	}{{true, ""}, {true, ""}, {false, "IOError"}, {false, "InvalidRequest"}}
	var instanceID string
	for i, w := range want {
		body := fake.answers["req-"+strconv.Itoa(i)]
		mustValidateResponse(t, body)
		var r Response
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		if r.OK != w.ok || (r.Error != nil && r.Error.Type != w.errType) || r.Cold != (i == 0) {
			t.Errorf("invocation %d: ok=%v cold=%v error=%v", i, r.OK, r.Cold, r.Error)
		}
		if instanceID == "" {
			instanceID = r.Instance.ID
		} else if r.Instance.ID != instanceID {
			t.Errorf("instance id changed within one process")
		}
		if r.Instance.Env.FunctionName == nil || *r.Instance.Env.FunctionName != "faascope-test" ||
			r.Instance.Env.MemoryMB == nil || *r.Instance.Env.MemoryMB != 512 || r.Instance.Env.LogStream == nil {
			t.Errorf("env %+v", r.Instance.Env)
		}
	}
}

func TestLambdaInitError(t *testing.T) {
	fake, api, ctx := newFakeRuntimeAPI(t, `{"workload": {"kind": "noop"}}`)
	boom := errors.New("no entropy")
	err := RunLambda(ctx, api, func() (*Handler, error) { return nil, boom }, io.Discard)
	if !errors.Is(err, boom) {
		t.Fatalf("RunLambda returned %v", err)
	}
	if fake.initErr["errorType"] != "Runtime.InitError" || fake.initErr["errorMessage"] != "no entropy" || fake.errHdr != "Runtime.InitError" {
		t.Fatalf("init error posted: %v (header %q)", fake.initErr, fake.errHdr)
	}
	if len(fake.answers) != 0 || len(fake.queue) != 1 {
		t.Fatalf("an invocation was fetched after a failed init")
	}
}

func TestLambdaRuntimeAPIGone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	err := RunLambda(context.Background(), strings.TrimPrefix(srv.URL, "http://"),
		func() (*Handler, error) { return NewHandler(io.Discard) }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("want an error naming the status, got %v", err)
	}
}
