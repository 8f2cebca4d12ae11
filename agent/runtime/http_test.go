package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/faascope/faascope/agent/workloads"
)

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	h, err := NewHandler(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHTTPHandler(h))
	t.Cleanup(srv.Close)
	return srv
}

func postJSON(t *testing.T, url, payload string) (int, Response, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var r Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("body is not the agent's JSON: %v\n%s", err, body)
	}
	return res.StatusCode, r, body
}

func TestHTTPMode(t *testing.T) {
	srv := newTestServer(t)
	cases := []struct {
		path, payload string
		status        int
		errType       string
	}{
		{"/", `{"workload": {"kind": "noop"}}`, 200, ""},
		{"/invoke", `{"workload": {"kind": "spin", "iterations": 100000}}`, 200, ""},
		{"/", `{"workload": {"kind": "fileio", "op": "write", "file_size": 65536, "io_size": 4096, "direct": true, "fsync": "end"}}`, 200, ""},
		{"/", `{"workload": {"kind": "fileio", "op": "read", "file_size": 65536, "io_size": 4096, "prepare": false, "pattern": "random", "seed": 9}}`, 200, ""},
		{"/", `{"workload": {"kind": "fileio", "engine": "dd", "op": "read", "file_size": 65536, "io_size": 4096}}`, 200, ""},
		{"/", `{"workload": {"kind": "fileio", "op": "read", "file_size": 4096, "io_size": 512, "prepare": false, "path": "absent"}}`, 500, workloads.IOError},
		{"/invoke", `{"workload": {"kind": "spin", "iterations": -1}}`, 400, workloads.InvalidRequest},
		{"/", `{"workload"`, 400, workloads.InvalidRequest},
	}
	for i, c := range cases {
		status, r, body := postJSON(t, srv.URL+c.path, c.payload)
		mustValidateResponse(t, body)
		if status != c.status || r.Cold != (i == 0) {
			t.Errorf("%s: status %d cold %v\n%s", c.payload, status, r.Cold, body)
		}
		if (c.errType == "") != r.OK || (r.Error != nil && r.Error.Type != c.errType) {
			t.Errorf("%s: ok %v error %v", c.payload, r.OK, r.Error)
		}
		if r.OK && (r.Timings.WorkloadStartNs == nil || *r.Timings.WorkloadStartNs < r.Timings.ReceivedNs ||
			*r.Timings.WorkloadEndNs < *r.Timings.WorkloadStartNs) {
			t.Errorf("%s: timings %+v", c.payload, r.Timings)
		}
	}

	res, err := http.Get(srv.URL + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	res.Body.Close()
	res, err = http.Get(srv.URL + "/")
	if err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /: %v %v", res, err)
	}
	res.Body.Close()
}

func TestHTTPBodyTooLarge(t *testing.T) {
	srv := newTestServer(t)
	big := `{"workload": {"kind": "noop", "pad": "` + strings.Repeat("x", MaxPayload) + `"}}`
	status, r, body := postJSON(t, srv.URL, big)
	mustValidateResponse(t, body)
	if status != 400 || r.Error == nil || !strings.HasPrefix(r.Error.Message, "request: ") {
		t.Fatalf("status %d error %v", status, r.Error)
	}
}

// One request at a time per instance, as on a FaaS platform: concurrent requests queue.
func TestHTTPSerializesConcurrentRequests(t *testing.T) {
	srv := newTestServer(t)
	const n = 8
	var wg sync.WaitGroup
	results := make([]Response, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			status, r, _ := postJSON(t, srv.URL, `{"workload": {"kind": "spin", "iterations": 2000000}}`)
			if status != 200 {
				t.Errorf("status %d", status)
			}
			results[i] = r
		}(i)
	}
	wg.Wait()
	cold := 0
	for _, r := range results {
		if r.Cold {
			cold++
		}
	}
	if cold != 1 {
		t.Errorf("%d cold responses, want 1", cold)
	}
	sort.Slice(results, func(i, j int) bool { return *results[i].Timings.WorkloadStartNs < *results[j].Timings.WorkloadStartNs })
	for i := 1; i < n; i++ {
		if *results[i].Timings.WorkloadStartNs < *results[i-1].Timings.WorkloadEndNs {
			t.Errorf("workloads %d and %d overlapped", i-1, i)
		}
	}
}

type panicky struct{}

func (panicky) Validate() error                  { return nil }
func (panicky) Run(context.Context) (any, error) { panic("boom") }

func TestPanicBecomesInternalError(t *testing.T) {
	decodeRequest = func([]byte) (workloads.Workload, string, error) { return panicky{}, "panicky", nil }
	defer func() { decodeRequest = DecodeRequest }()
	srv := newTestServer(t)
	status, r, body := postJSON(t, srv.URL, `{}`)
	mustValidateResponse(t, body)
	if status != 500 || r.OK || r.Error.Type != workloads.Internal || !strings.Contains(r.Error.Message, "boom") {
		t.Fatalf("status %d response %s", status, body)
	}
	// The instance survives.
	decodeRequest = DecodeRequest
	if status, r, _ := postJSON(t, srv.URL, `{"workload": {"kind": "noop"}}`); status != 200 || !r.OK || r.Cold {
		t.Fatalf("after a panic: %d %+v", status, r)
	}
}

func TestServeShutsDownWithContext(t *testing.T) {
	h, err := NewHandler(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, "127.0.0.1:0", h) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeHTTP after cancel: %v", err)
	}
}
