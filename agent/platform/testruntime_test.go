package platform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as a minimal custom runtime, so tests can look inside a sandbox at
// what the agent cannot show (files under /opt) and hold an invocation for a set time. A
// sandbox runs it as /var/task/bootstrap or /opt/bootstrap; TestMain routes that here.
//
// Event: {"read": ["/opt/x", ...], "sleep_ms": N}. Answer: {"files": {path: content or
// "ERR: ..."}, "bootstrap": argv[0]}. In plain-process mode /opt is $FAASCOPE_OPT_DIR.

func runningAsTestRuntime() bool {
	return os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" && filepath.Base(os.Args[0]) == "bootstrap"
}

func testRuntime() int {
	api := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/invocation/"
	for {
		resp, err := http.Get(api + "next")
		if err != nil {
			return 1
		}
		id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
		var ev struct {
			Read    []string `json:"read"`
			SleepMs int      `json:"sleep_ms"`
		}
		json.NewDecoder(resp.Body).Decode(&ev)
		resp.Body.Close()
		time.Sleep(time.Duration(ev.SleepMs) * time.Millisecond)
		files := map[string]string{}
		for _, p := range ev.Read {
			local := p
			if opt := os.Getenv("FAASCOPE_OPT_DIR"); opt != "" && strings.HasPrefix(p, "/opt/") {
				local = filepath.Join(opt, strings.TrimPrefix(p, "/opt/"))
			}
			if b, err := os.ReadFile(local); err != nil {
				files[p] = "ERR: " + err.Error()
			} else {
				files[p] = string(b)
			}
		}
		out, _ := json.Marshal(map[string]any{"files": files, "bootstrap": os.Args[0]})
		r, err := http.Post(api+id+"/response", "application/json", bytes.NewReader(out))
		if err != nil {
			return 1
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}

var (
	testRuntimeOnce sync.Once
	testRuntimeBin  string
)

// testRuntimeFile is the test binary, to be zipped as a bootstrap.
func testRuntimeFile(t *testing.T) string {
	testRuntimeOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		testRuntimeBin = exe
	})
	return testRuntimeBin
}

// runtimeReply is the test runtime's answer.
type runtimeReply struct {
	Files     map[string]string `json:"files"`
	Bootstrap string            `json:"bootstrap"`
}

func (tp *testPlatform) invokeRuntime(name string, ev map[string]any) (*http.Response, runtimeReply, []byte) {
	tp.t.Helper()
	b, _ := json.Marshal(ev)
	resp, _, body := tp.invoke(name, string(b))
	var r runtimeReply
	json.Unmarshal(body, &r)
	return resp, r, body
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
