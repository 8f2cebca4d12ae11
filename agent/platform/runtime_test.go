package platform

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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

func (tp *testPlatform) createGoProbe(name string, extra map[string]any, files map[string][]byte) {
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
	tp.createGoProbe("quitter", nil, nil)
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

func TestSandboxEnvironmentIsLambdasForProvidedRuntimes(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createGoProbe("env", map[string]any{"Environment": map[string]any{"Variables": map[string]string{
		"MY_VAR": "mine", "AWS_LAMBDA_EXEC_WRAPPER": "/opt/wrapper", "LANG": "C.UTF-8"}}}, nil)
	res, _ := tp.invokeDirect(InvokeRequest{Name: "env", Payload: []byte(`{"op":"env"}`)})
	env := decodeMap(t, res.Payload)
	task, runtimeDir := "/var/task", "/var/runtime"
	if isolation() != "namespaces" { // plain processes: the package is where it was unpacked
		task, runtimeDir = env["LAMBDA_TASK_ROOT"], env["LAMBDA_RUNTIME_DIR"]
		if !filepath.IsAbs(task) || !filepath.IsAbs(runtimeDir) {
			t.Fatalf("plain mode: LAMBDA_TASK_ROOT %q, LAMBDA_RUNTIME_DIR %q", task, runtimeDir)
		}
	}
	want := map[string]string{
		"TZ": ":UTC", "LANG": "C.UTF-8", // the function's LANG replaces Lambda's, as Lambda allows
		"PATH":                            "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LD_LIBRARY_PATH":                 "/lib64:/usr/lib64:" + runtimeDir + ":" + runtimeDir + "/lib:" + task + ":" + task + "/lib:/opt/lib",
		"LAMBDA_TASK_ROOT":                task,
		"LAMBDA_RUNTIME_DIR":              runtimeDir,
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_FUNCTION_NAME":        "env",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/env",
		"AWS_ACCESS_KEY_ID":               FunctionAccessKeyID,
		"AWS_SECRET_ACCESS_KEY":           FunctionSecretAccessKey,
		"_HANDLER":                        "bootstrap",
		"MY_VAR":                          "mine",
		"AWS_LAMBDA_EXEC_WRAPPER":         "/opt/wrapper", // passed on, not run: provided.* has no wrapper scripts
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// Unset for provided.* on Lambda; and nothing of faascope's own (AWS's recorded environment,
	// test_introspection_invoke, has no HOME, TMPDIR or FAASCOPE_*). Plain processes keep a
	// private TMPDIR: their /tmp is the host's.
	unset := []string{"AWS_EXECUTION_ENV", "_X_AMZN_TRACE_ID", "AWS_SESSION_TOKEN", "HOME", "FAASCOPE_PROFILE", "FAASCOPE_INSTANCE_ID"}
	if isolation() == "namespaces" {
		unset = append(unset, "TMPDIR")
	}
	for _, k := range unset {
		if v, ok := env[k]; ok {
			t.Errorf("%s should be unset for a provided.* runtime, is %q", k, v)
		}
	}
	if env["AWS_REGION"] == "" || env["AWS_REGION"] != env["AWS_DEFAULT_REGION"] {
		t.Errorf("AWS_REGION %q / AWS_DEFAULT_REGION %q", env["AWS_REGION"], env["AWS_DEFAULT_REGION"])
	}
}

func TestReservedEnvironmentVariablesAreRefused(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createGoProbe("res", nil, nil)
	const prefix = "Lambda was unable to configure your environment variables because the environment variables " +
		"you have provided contains reserved keys that are currently not supported for modification. Reserved keys used in this request: "
	for _, vars := range []map[string]string{
		{"AWS_REGION": "eu-west-1"}, {"LAMBDA_TASK_ROOT": "/x"}, {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"},
		{"AWS_SESSION_TOKEN": "t"}, {"AWS_EXECUTION_ENV": "x"}, {"AWS_LAMBDA_INITIALIZATION_TYPE": "x"},
		{"_X_AMZN_TRACE_ID": "x"}, {"LAMBDA_RUNTIME_DIR": "x"}, {"AWS_DEFAULT_REGION": "x"}, {"AWS_ACCESS_KEY": "x"},
	} {
		for _, op := range []string{"create", "update"} {
			var resp *http.Response
			var body []byte
			if op == "create" {
				req := map[string]any{"FunctionName": "res2", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
					"Code":        map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(probe(t, nil))},
					"Environment": map[string]any{"Variables": vars}}
				resp, body = tp.call("POST", "/2015-03-31/functions", req, nil)
			} else {
				resp, body = tp.call("PUT", "/2015-03-31/functions/res/configuration",
					map[string]any{"Environment": map[string]any{"Variables": vars}}, nil)
			}
			keys := make([]string, 0, len(vars))
			for k := range vars {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var e struct{ Message string }
			json.Unmarshal(body, &e)
			if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "InvalidParameterValueException" ||
				e.Message != prefix+strings.Join(keys, ", ") {
				t.Errorf("%s with %v: %d %s", op, keys, resp.StatusCode, body)
			}
		}
	}
	// What Lambda allows, including AWS_LAMBDA_EXEC_WRAPPER and the unreserved defaults.
	ok := map[string]string{"AWS_LAMBDA_EXEC_WRAPPER": "/opt/w", "TZ": "Europe/Paris", "PATH": "/bin",
		"LD_LIBRARY_PATH": "/x", "LANG": "C", "AWS_LAMBDA_LOG_LEVEL": "DEBUG", "AWS_ENDPOINT_URL_S3": "http://x"}
	if resp, body := tp.call("PUT", "/2015-03-31/functions/res/configuration",
		map[string]any{"Environment": map[string]any{"Variables": ok}}, nil); resp.StatusCode != 200 {
		t.Fatalf("allowed variables refused: %d %s", resp.StatusCode, body)
	}
}

func TestEnvironmentOver4KBIsRefused(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createGoProbe("big", nil, nil)
	// {"A":"<v>"} is 8 bytes plus the value: 4096 fits, 4097 does not.
	for _, n := range []int{4096 - 8, 4096 - 7} {
		vars := map[string]string{"A": strings.Repeat("x", n)}
		resp, body := tp.call("PUT", "/2015-03-31/functions/big/configuration",
			map[string]any{"Environment": map[string]any{"Variables": vars}}, nil)
		fits := n+8 <= 4096
		if fits && resp.StatusCode != 200 {
			t.Fatalf("%d bytes should fit: %d %s", n+8, resp.StatusCode, body)
		}
		if !fits && (resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "InvalidParameterValueException" ||
			!strings.Contains(string(body), "exceeded the 4KB limit. String measured: {\\\"A\\\":")) {
			t.Fatalf("%d bytes should be refused: %d %s", n+8, resp.StatusCode, body)
		}
	}
}

func TestRuntimeAPIHeaders(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createGoProbe("hdr", nil, nil)
	cc := `{"client":{"installation_id":"i-1"},"custom":{"k":"v"},"env":{}}`
	res, meta := tp.invokeDirect(InvokeRequest{Name: "hdr", Payload: []byte(`{"op":"headers"}`), ClientContext: cc})
	h := decodeMap(t, res.Payload)
	if h["Lambda-Runtime-Client-Context"] != cc {
		t.Errorf("Lambda-Runtime-Client-Context = %q, want %q", h["Lambda-Runtime-Client-Context"], cc)
	}
	if h["Lambda-Runtime-Aws-Request-Id"] != meta.RequestID {
		t.Errorf("request id %q, want %q", h["Lambda-Runtime-Aws-Request-Id"], meta.RequestID)
	}
	trace := regexp.MustCompile(`^Root=1-([0-9a-f]{8})-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$`)
	m := trace.FindStringSubmatch(h["Lambda-Runtime-Trace-Id"])
	if m == nil {
		t.Fatalf("Lambda-Runtime-Trace-Id %q is not in X-Ray format", h["Lambda-Runtime-Trace-Id"])
	}
	if sec, _ := strconv.ParseInt(m[1], 16, 64); time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
		t.Errorf("trace id epoch %s is not now", m[1])
	}
	if !strings.HasPrefix(h["Lambda-Runtime-Invoked-Function-Arn"], "arn:aws:lambda:") {
		t.Errorf("Lambda-Runtime-Invoked-Function-Arn %q", h["Lambda-Runtime-Invoked-Function-Arn"])
	}
	// No client context: no header, as on Lambda; and a new trace id per invocation.
	res2, _ := tp.invokeDirect(InvokeRequest{Name: "hdr", Payload: []byte(`{"op":"headers"}`)})
	h2 := decodeMap(t, res2.Payload)
	if _, ok := h2["Lambda-Runtime-Client-Context"]; ok {
		t.Errorf("Lambda-Runtime-Client-Context sent without a client context: %q", h2["Lambda-Runtime-Client-Context"])
	}
	if h2["Lambda-Runtime-Trace-Id"] == h["Lambda-Runtime-Trace-Id"] {
		t.Error("each invocation needs its own trace id")
	}
}

func TestStreamingAndCutResponsesAreFunctionErrors(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.createGoProbe("stream", nil, nil)
	// A streamed response that completes is the function's answer (its chunks, as a buffered
	// Invoke returns them).
	res, _ := tp.invokeDirect(InvokeRequest{Name: "stream", Payload: []byte(`{"op":"stream-ok"}`)})
	if res.FuncError != "" || string(res.Payload) != `{"part":1}{"part":2}` {
		t.Fatalf("streamed success: %q %s", res.FuncError, res.Payload)
	}
	// One that fails midway says so in its trailers: a function error with the runtime's type
	// and body, never a success.
	res, _ = tp.invokeDirect(InvokeRequest{Name: "stream", Payload: []byte(`{"op":"stream-error"}`)})
	if res.FuncError != "Unhandled" {
		t.Fatalf("a stream with an error trailer was reported as success: %s", res.Payload)
	}
	if e := decodeMap(t, res.Payload); e["errorType"] != "StreamFailed" || e["errorMessage"] != "broke midway" {
		t.Fatalf("stream error: %s", res.Payload)
	}
	// A /response whose body is cut before its declared length (the connection reset).
	start := time.Now()
	res, _ = tp.invokeDirect(InvokeRequest{Name: "stream", Payload: []byte(`{"op":"truncate"}`)})
	if res.FuncError != "Unhandled" || decodeMap(t, res.Payload)["errorType"] != "Runtime.TruncatedResponse" {
		t.Fatalf("cut response: %q %s", res.FuncError, res.Payload)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("a cut response took %s to be reported (it waited for the timeout)", el)
	}
	// The runtime lives on and serves the next invocation.
	if res, _ = tp.invokeDirect(InvokeRequest{Name: "stream", Payload: []byte(`{"op":"noop"}`)}); res.FuncError != "" {
		t.Fatalf("after a cut response: %s", res.Payload)
	}
}

func TestMaxMemoryUsedCountsFileBackedPages(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	const size = 40 << 20 // stored uncompressed: the package stays under the 50 MB upload limit
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	tp.createGoProbe("mem", map[string]any{"MemorySize": 512}, map[string][]byte{"data.bin": data})
	_, base := tp.invokeDirect(InvokeRequest{Name: "mem", Payload: []byte(`{"op":"noop"}`)})
	res, mapped := tp.invokeDirect(InvokeRequest{Name: "mem", Payload: []byte(`{"op":"mapfile","path":"/var/task/data.bin"}`)})
	if res.FuncError != "" {
		t.Fatal(string(res.Payload))
	}
	t.Logf("baseline %d MB, after mapping and reading a %d MB file of the package %d MB (%s)",
		base.PeakBytes>>20, size>>20, mapped.PeakBytes>>20, res.Payload)
	// The function's process holds the file's pages: they are its memory, as its RSS says.
	if mapped.PeakBytes-base.PeakBytes < size*9/10 {
		t.Fatalf("Max Memory Used left out the %d MB of file-backed pages the function mapped: %d MB → %d MB",
			size>>20, base.PeakBytes>>20, mapped.PeakBytes>>20)
	}
	tp.createGoProbe("anon", map[string]any{"MemorySize": 512}, nil)
	_, base = tp.invokeDirect(InvokeRequest{Name: "anon", Payload: []byte(`{"op":"noop"}`)})
	_, alloc := tp.invokeDirect(InvokeRequest{Name: "anon", Payload: []byte(fmt.Sprintf(`{"op":"alloc","bytes":%d}`, size))})
	t.Logf("anonymous: baseline %d MB, after %d MB %d MB", base.PeakBytes>>20, size>>20, alloc.PeakBytes>>20)
	if alloc.PeakBytes-base.PeakBytes < size*9/10 {
		t.Fatalf("anonymous memory under-counted: %d MB → %d MB", base.PeakBytes>>20, alloc.PeakBytes>>20)
	}
	tp.createGoProbe("tmp", map[string]any{"MemorySize": 512}, nil)
	_, base = tp.invokeDirect(InvokeRequest{Name: "tmp", Payload: []byte(`{"op":"noop"}`)})
	_, wrote := tp.invokeDirect(InvokeRequest{Name: "tmp", Payload: []byte(fmt.Sprintf(`{"op":"tmpfile","bytes":%d}`, size))})
	t.Logf("/tmp: baseline %d MB, after writing %d MB %d MB", base.PeakBytes>>20, size>>20, wrote.PeakBytes>>20)
	// Its page cache counts once (the loop device's backing file must not add a second copy).
	if d := wrote.PeakBytes - base.PeakBytes; d < size*9/10 || d > size*3/2 {
		t.Fatalf("a %d MB /tmp file should count once: %d MB → %d MB", size>>20, base.PeakBytes>>20, wrote.PeakBytes>>20)
	}
}

// The log tail has everything the function printed before it answered: the output is copied
// from a pipe beside the Runtime API, and under load a line printed just before the response
// missed the tail (lambda_runtime's, once in a CI run of the conformance suite). The race
// depends on load: this test drives the path with 256 KiB through the pipe, but it did not
// fail without the fix on a quiet machine.
func TestLogTailHasWhatWasPrintedBeforeTheAnswer(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createGoProbe("chatty", nil, nil)
	for i := 0; i < 5; i++ {
		resp, body := tp.call("POST", fnPath+"chatty/invocations", map[string]any{"op": "print-then-answer"},
			map[string]string{"X-Amz-Log-Type": "Tail"})
		if resp.StatusCode != 200 {
			t.Fatalf("invoke: %d %s", resp.StatusCode, body)
		}
		logs, _ := base64.StdEncoding.DecodeString(resp.Header.Get("X-Amz-Log-Result"))
		if !strings.Contains(string(logs), "last line before the answer\nEND RequestId:") {
			t.Fatalf("round %d: the tail lacks the function's last line:\n%s", i, logs[max(0, len(logs)-600):])
		}
	}
}
