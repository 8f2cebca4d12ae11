package platform

import (
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
)

// TestWarmPathProfile writes a CPU profile of the platform serving warm noop invocations (the
// path from Invoke to the Runtime API's /next and back: bench/platform_overhead.py measures it;
// docs/platform.md, "What a cold start and a warm invoke cost"). Only with
// FAASCOPE_WARM_PROFILE=<file> (and FAASCOPE_WARM_PROFILE_N invocations, default 3000): it is
// a measuring aid, not a test.
func TestWarmPathProfile(t *testing.T) {
	out := os.Getenv("FAASCOPE_WARM_PROFILE")
	if out == "" {
		t.Skip("set FAASCOPE_WARM_PROFILE=<file> to profile the warm path")
	}
	needSandboxes(t)
	n, _ := strconv.Atoi(os.Getenv("FAASCOPE_WARM_PROFILE_N"))
	if n <= 0 {
		n = 3000
	}
	tp := startPlatform(t, Config{DefaultProfile: ProfileUnlimited})
	tp.create("prof", map[string]any{"MemorySize": 2048})
	tp.invoke("prof", `{"workload":{"kind":"noop"}}`) // the cold start
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &http.Client{}
	url := tp.url + "/2015-03-31/functions/prof/invocations"
	pprof.StartCPUProfile(f)
	for i := 0; i < n; i++ {
		resp, err := c.Post(url, "application/json", strings.NewReader(`{"workload":{"kind":"noop"}}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("X-Faascope-Cold") != "false" {
			t.Fatalf("invocation %d was not warm", i)
		}
	}
	pprof.StopCPUProfile()
}
