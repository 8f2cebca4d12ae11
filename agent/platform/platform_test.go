package platform

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests drive the platform through its Lambda API, with the real agent as the function.
// As root they use real sandboxes (namespaces, cgroups, loop-mounted /tmp); otherwise plain
// processes, and the tests that need limits say so and skip.

var agentZip []byte

func TestMain(m *testing.M) {
	if runningAsTestRuntime() { // this binary as a function's bootstrap (testruntime_test.go)
		os.Exit(testRuntime())
	}
	if handled, err := RunProbe(os.Args); handled { // as main does
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(127)
		}
		os.Exit(0)
	}
	// The sandbox init re-executes the test binary: route that to the init, as main does, and
	// end there. It comes before anything the tests themselves need: every sandbox the tests
	// start runs this, and a temporary directory made here first was left behind by each
	// (~250 empty /tmp/faascope-platform-test* per run, issue #29).
	if len(os.Args) > 2 && os.Args[1] == SandboxInitArg {
		if err := RunSandboxInit(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox init:", err)
			os.Exit(127)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "faascope-platform-test")
	if err != nil {
		panic(err)
	}
	bin := filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-o", bin, "../cmd/faascope-agent")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build agent: %v\n%s", err, out))
	}
	agentZip = zipOf(map[string]string{"bootstrap": bin}, nil)
	code := m.Run()
	os.RemoveAll(dir)
	if probeBin != "" { // testdata/probe's build (runtime_test.go), made once per run
		os.RemoveAll(filepath.Dir(probeBin))
	}
	os.Exit(code)
}

// TestSandboxInitLeavesNoTemporaryDirectory: the test binary re-executed as a sandbox's init
// (as the platform runs it, here with a gate that closes empty, so the init gives up at once) makes nothing in
// the temporary directory. Each sandbox the tests started used to leave an empty
// faascope-platform-test* directory there.
func TestSandboxInitLeavesNoTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	gate, err := os.Open(os.DevNull) // a gate that closes empty: the host gave up
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	cmd := exec.Command(os.Args[0], SandboxInitArg, "")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.ExtraFiles = []*os.File{gate}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 127 || !strings.Contains(string(out), "sandbox init:") {
		t.Fatalf("the init without a gate: want exit 127 with its error, got %v: %s", err, out)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("a sandbox init left %d entries in TMPDIR (first %q)", len(left), left[0].Name())
	}
}

func zipOf(files map[string]string, inline map[string][]byte) []byte {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, path := range files {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(0o755)
		w, _ := z.CreateHeader(h)
		b, _ := os.ReadFile(path)
		w.Write(b)
	}
	for name, data := range inline {
		h := &zip.FileHeader{Name: name, Method: zip.Store}
		h.SetMode(0o755)
		w, _ := z.CreateHeader(h)
		w.Write(data)
	}
	z.Close()
	return buf.Bytes()
}

func isolation() string {
	if os.Geteuid() == 0 && CgroupVersion() != 0 {
		return "namespaces"
	}
	return "none"
}

func needSandboxes(t *testing.T) {
	if isolation() != "namespaces" {
		t.Skip("needs root and cgroups for real sandboxes")
	}
}

type testPlatform struct {
	*Platform
	url string
	t   *testing.T
}

func startPlatform(t *testing.T, cfg Config) *testPlatform {
	t.Helper()
	cfg.DataDir = t.TempDir()
	if cfg.DefaultProfile == "" {
		cfg.DefaultProfile = ProfileLambda
	}
	cfg.Isolation = isolation()
	if cfg.SpareSandboxes == 0 { // as the command runs it; -1 for cold starts that make their own
		cfg.SpareSandboxes = DefaultSpareSandboxes
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Serve(ctx, ln, APIHandler(p)); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &testPlatform{p, "http://" + ln.Addr().String(), t}
}

func (tp *testPlatform) call(method, path string, body any, headers map[string]string) (*http.Response, []byte) {
	tp.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, tp.url+path, rd)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tp.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (tp *testPlatform) create(name string, extra map[string]any) {
	tp.t.Helper()
	req := map[string]any{"FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/x",
		"Handler": "bootstrap", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)},
		"MemorySize": 256, "Timeout": 30}
	for k, v := range extra {
		req[k] = v
	}
	resp, body := tp.call("POST", "/2015-03-31/functions", req, nil)
	if resp.StatusCode != http.StatusCreated {
		tp.t.Fatalf("create %s: %d %s", name, resp.StatusCode, body)
	}
	waitReady(tp.t, tp.Platform, name) // as boto3's function_active_v2 waiter does
}

// key and ref name a us-east-1 function (and no version) for the core's calls.
func key(name string) fnKey   { return fnKey{defaultRegion, name} }
func ref(name string) funcRef { return funcRef{fnKey: key(name)} }

// waitReady waits until a function is Active and its last update done, as boto3's
// function_active_v2 and function_updated_v2 waiters do before invoking or updating.
func waitReady(t *testing.T, p *Platform, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		fn, err := p.GetFunction(ref(name))
		if err != nil {
			t.Fatalf("wait for %s: %v", name, err)
		}
		c := fn.Config
		if c.State == "Active" && c.LastUpdateStatus == "Successful" {
			return
		}
		if c.State == "Failed" || c.LastUpdateStatus == "Failed" || time.Now().After(deadline) {
			t.Fatalf("%s did not become ready: %+v", name, c)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type agentReply struct {
	OK       bool `json:"ok"`
	Cold     bool `json:"cold"`
	Instance struct {
		ID          string   `json:"id"`
		Sandbox     string   `json:"sandbox"`
		CPUQuota    *float64 `json:"cpu_quota"`
		MemoryLimit *int64   `json:"memory_limit_bytes"`
	} `json:"instance"`
	Workload map[string]any `json:"workload"`
	Error    *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func (tp *testPlatform) invoke(name string, payload string) (*http.Response, agentReply, []byte) {
	tp.t.Helper()
	req, _ := http.NewRequest("POST", tp.url+"/2015-03-31/functions/"+name+"/invocations", strings.NewReader(payload))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tp.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r agentReply
	json.Unmarshal(body, &r)
	return resp, r, body
}

func TestWarmReuseAndEvictionAfterKeepAlive(t *testing.T) {
	tp := startPlatform(t, Config{KeepAlive: 700 * time.Millisecond})
	tp.create("warm", nil)
	_, first, body := tp.invoke("warm", `{"workload":{"kind":"noop"}}`)
	if !first.OK || !first.Cold {
		t.Fatalf("first invoke should be a cold ok: %s", body)
	}
	resp, second, _ := tp.invoke("warm", `{"workload":{"kind":"noop"}}`)
	if second.Cold || second.Instance.ID != first.Instance.ID || resp.Header.Get("X-Faascope-Cold") != "false" {
		t.Fatalf("second invoke should be warm on instance %s, got cold=%v on %s", first.Instance.ID, second.Cold, second.Instance.ID)
	}
	time.Sleep(1200 * time.Millisecond)
	if n := len(tp.Instances()); n != 0 {
		t.Fatalf("idle instance not evicted after keep-alive: %d left", n)
	}
	_, third, _ := tp.invoke("warm", `{"workload":{"kind":"noop"}}`)
	if !third.Cold || third.Instance.ID == first.Instance.ID {
		t.Fatalf("after keep-alive the invoke should be cold on a new instance")
	}
}

func TestKeepAliveTagOverridesPlatformDefault(t *testing.T) {
	tp := startPlatform(t, Config{KeepAlive: time.Hour})
	tp.create("short", map[string]any{"Tags": map[string]string{TagKeepAlive: "0.2"}})
	tp.invoke("short", `{"workload":{"kind":"noop"}}`)
	time.Sleep(600 * time.Millisecond)
	if _, r, _ := tp.invoke("short", `{"workload":{"kind":"noop"}}`); !r.Cold {
		t.Fatal("a 0.2 s keep-alive tag should have evicted the instance")
	}
}

func TestUpdateConfigurationRetiresInstances(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("upd", nil)
	tp.invoke("upd", `{"workload":{"kind":"noop"}}`)
	resp, body := tp.call("PUT", "/2015-03-31/functions/upd/configuration", map[string]any{"MemorySize": 512}, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"MemorySize":512`) {
		t.Fatalf("update: %d %s", resp.StatusCode, body)
	}
	_, r, _ := tp.invoke("upd", `{"workload":{"kind":"noop"}}`)
	if !r.Cold {
		t.Fatal("after a configuration update the next invoke must be cold, as on AWS")
	}
	if isolation() == "namespaces" && (r.Instance.MemoryLimit == nil || *r.Instance.MemoryLimit != 512<<20) {
		t.Fatalf("new instance should have the new memory limit, got %v", r.Instance.MemoryLimit)
	}
}

func TestFunctionErrorsAndAPIErrors(t *testing.T) {
	tp := startPlatform(t, Config{})
	resp, body := tp.call("GET", "/2015-03-31/functions/nope", nil, nil)
	if resp.StatusCode != 404 || resp.Header.Get("X-Amzn-ErrorType") != "ResourceNotFoundException" {
		t.Fatalf("missing function: %d %s", resp.StatusCode, body)
	}
	tp.create("dup", nil)
	resp, _ = tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "dup", "Runtime": "provided.al2023",
		"Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}, nil)
	if resp.StatusCode != 409 || resp.Header.Get("X-Amzn-ErrorType") != "ResourceConflictException" {
		t.Fatalf("duplicate create: %d", resp.StatusCode)
	}
	for field, bad := range map[string]any{"MemorySize": 64, "Timeout": 901, "Runtime": "python3.12",
		"EphemeralStorage": map[string]int{"Size": 100}, "Tags": map[string]string{TagProfile: "azure"}} {
		req := map[string]any{"FunctionName": "bad", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
			"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}, field: bad}
		resp, body := tp.call("POST", "/2015-03-31/functions", req, nil)
		// Named as AWS names it: the API model's validation says memorySize, the service MemorySize.
		if resp.StatusCode != 400 || !strings.Contains(strings.ToLower(string(body)), strings.ToLower(field)) {
			t.Errorf("%s=%v: want 400 naming the field, got %d %s", field, bad, resp.StatusCode, body)
		}
	}
	// A workload error is the agent's JSON with ok=false, not a function error.
	resp, r, body := tp.invoke("dup", `{"workload":{"kind":"fileio","op":"read","file_size":10,"io_size":20}}`)
	if resp.Header.Get("X-Amz-Function-Error") != "" || r.OK || r.Error == nil || r.Error.Type != "InvalidRequest" {
		t.Fatalf("bad workload: %s", body)
	}
}

func TestInvokeEventAndLogTail(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("ev", nil)
	resp, _ := tp.call("POST", "/2015-03-31/functions/ev/invocations", map[string]any{"workload": map[string]any{"kind": "noop"}},
		map[string]string{"X-Amz-Invocation-Type": "Event"})
	if resp.StatusCode != 202 {
		t.Fatalf("Event invoke: %d", resp.StatusCode)
	}
	resp, _ = tp.call("POST", "/2015-03-31/functions/ev/invocations", map[string]any{"workload": map[string]any{"kind": "noop"}},
		map[string]string{"X-Amz-Log-Type": "Tail"})
	logs, _ := base64.StdEncoding.DecodeString(resp.Header.Get("X-Amz-Log-Result"))
	for _, want := range []string{"START RequestId:", "END RequestId:", "REPORT RequestId:", "Billed Duration:", "Memory Size: 256 MB"} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("log tail lacks %q:\n%s", want, logs)
		}
	}
}

func TestConcurrencyLimitThrottles(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 2})
	tp.create("busy", nil)
	var wg sync.WaitGroup
	codes := make(chan int, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _, _ := tp.invoke("busy", `{"workload":{"kind":"spin","iterations":200000000}}`)
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[429] == 0 || count[200] == 0 || count[200] > 2+2 {
		t.Fatalf("with a limit of 2 and 6 simultaneous calls expected some 429s: %v", count)
	}
}

func TestTimeoutKillsSandboxAndReportsError(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("slow", map[string]any{"Timeout": 1})
	start := time.Now()
	resp, _, body := tp.invoke("slow", `{"workload":{"kind":"spin","iterations":100000000000}}`)
	if resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || !strings.Contains(string(body), "Sandbox.Timedout") {
		t.Fatalf("timeout: %s", body)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("timeout took %s", el)
	}
	if _, r, _ := tp.invoke("slow", `{"workload":{"kind":"noop"}}`); !r.OK || !r.Cold {
		t.Fatal("after a timeout the platform should serve the next call from a fresh instance")
	}
}

func TestSandboxLimitsAreReal(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.create("lim", map[string]any{"MemorySize": 1024, "EphemeralStorage": map[string]int{"Size": 600}})
	_, r, body := tp.invoke("lim", `{"workload":{"kind":"noop"}}`)
	if r.Instance.CPUQuota == nil || *r.Instance.CPUQuota < 0.578 || *r.Instance.CPUQuota > 0.580 {
		t.Fatalf("cpu quota at 1024 MB should be 0.579 vCPU: %s", body)
	}
	if r.Instance.MemoryLimit == nil || *r.Instance.MemoryLimit != 1024<<20 {
		t.Fatalf("memory limit: %s", body)
	}
	// The lambda profile's /tmp is its own file system of EphemeralStorage size: 600 MiB fit
	// no 700 MiB file.
	_, r, body = tp.invoke("lim", fmt.Sprintf(`{"workload":{"kind":"fileio","op":"write","file_size":%d,"io_size":1048576}}`, 700<<20))
	if r.OK || r.Error == nil || r.Error.Type != "NoSpace" {
		t.Fatalf("700 MiB into a 600 MiB /tmp should fail with NoSpace: %s", body)
	}
}

func TestGCFTmpIsChargedToMemory(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.create("g", map[string]any{"Tags": map[string]string{TagProfile: ProfileGCF}})
	resp, _, body := tp.invoke("g", fmt.Sprintf(`{"workload":{"kind":"fileio","op":"write","file_size":%d,"io_size":1048576}}`, 512<<20))
	if resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || !strings.Contains(string(body), "Runtime.OutOfMemory") {
		t.Fatalf("512 MiB into a 256 MB gcf /tmp should be an out-of-memory function error: %s", body)
	}
	if _, r, _ := tp.invoke("g", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatal("the platform should keep serving after an OOM")
	}
}

func TestOneFunctionCannotSeeAnothersTmp(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.create("a", nil)
	tp.create("b", nil)
	_, r, body := tp.invoke("a", `{"workload":{"kind":"fileio","op":"write","file_size":4096,"io_size":4096,"path":"secret.dat"}}`)
	if !r.OK {
		t.Fatalf("write in a: %s", body)
	}
	_, r, body = tp.invoke("b", `{"workload":{"kind":"fileio","op":"read","file_size":4096,"io_size":4096,"path":"secret.dat","prepare":false}}`)
	if r.OK {
		t.Fatalf("b read a's /tmp file: %s", body)
	}
	_, r, body = tp.invoke("a", `{"workload":{"kind":"fileio","op":"read","file_size":4096,"io_size":4096,"path":"secret.dat","prepare":false}}`)
	if !r.OK {
		t.Fatalf("a should read its own file back on the warm instance: %s", body)
	}
}

func TestPlatformRestartKeepsFunctionsAndCleansSandboxes(t *testing.T) {
	dir := t.TempDir()
	p, err := New(Config{DataDir: dir, DefaultProfile: ProfileLambda, Isolation: isolation()})
	if err != nil {
		t.Fatal(err)
	}
	// A function persisted on disk, and a stale sandbox directory and a half-uploaded package
	// from a "crash".
	if _, err := p.CreateFunction(CreateFunctionInput{Name: "kept", Runtime: "provided.al2023", Role: "arn:aws:iam::000000000000:role/r",
		Architecture: hostArch(), Code: bytes.NewReader(agentZip)}); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "sandboxes", "ghost")
	os.MkdirAll(stale, 0o700)
	halfUploaded := filepath.Join(p.store.stagingDir(), "code-crash.zip")
	os.WriteFile(halfUploaded, []byte("PK"), 0o600)
	p.Close()
	p2, err := New(Config{DataDir: dir, DefaultProfile: ProfileLambda, Isolation: isolation()})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, err := p2.GetFunction(ref("kept")); err != nil {
		t.Fatal("function lost across restart")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("stale sandbox directory not cleaned on start")
	}
	if _, err := os.Stat(halfUploaded); !os.IsNotExist(err) {
		t.Fatal("half-uploaded package not cleaned on start")
	}
}

func TestUnzipRefusesEscapingPaths(t *testing.T) {
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "evil.zip")
	os.WriteFile(zipPath, zipOf(nil, map[string][]byte{"../escape": []byte("x")}), 0o644)
	if err := unzip(zipPath, filepath.Join(dir, "out")); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Fatalf("want an escape error, got %v", err)
	}
}

// An HTTP workload stands in for the agent's network workloads: a tiny bootstrap is not needed,
// the agent's fileio cannot reach sockets, so these tests look at the relay directly.

func TestSandboxNetworkReachesOnlyExposedPorts(t *testing.T) {
	needSandboxes(t)
	// A service on the host's loopback, and the platform's own API, which must stay out of reach.
	svc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	go func() {
		for {
			c, err := svc.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello from the host"))
			c.Close()
		}
	}()
	port := svc.Addr().(*net.TCPAddr).Port
	tp := startPlatform(t, Config{})
	tp.create("net", map[string]any{"Tags": map[string]string{TagExpose: strconv.Itoa(port)}})
	if _, r, body := tp.invoke("net", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("the Runtime API must work through the sandbox's network: %s", body)
	}
	pid := tp.Instances()[0].Pid
	var got []byte
	err = inNetns(pid, func() error {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return err
		}
		defer c.Close()
		got, err = io.ReadAll(c)
		return err
	})
	if err != nil || string(got) != "hello from the host" {
		t.Fatalf("exposed port from inside the sandbox: %q, %v", got, err)
	}
	apiPort := strings.Split(tp.url, ":")[2]
	err = inNetns(pid, func() error {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+apiPort, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	if err == nil {
		t.Fatal("the platform's control API must not be reachable from a sandbox")
	}
}

func TestSandboxNetworkShapingFollowsTokenBucket(t *testing.T) {
	needSandboxes(t)
	// A source on the host that sends 18 MiB; the sandbox times what arrives (the receiver's
	// clock is the honest one: a sender's writes return once socket buffers take them).
	src, _ := net.Listen("tcp", "127.0.0.1:0")
	defer src.Close()
	go func() {
		for {
			c, err := src.Accept()
			if err != nil {
				return
			}
			go func() {
				chunk := make([]byte, 1<<20)
				for i := 0; i < 18; i++ {
					if _, err := c.Write(chunk); err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	port := src.Addr().(*net.TCPAddr).Port
	// 4 MiB bucket refilling in 200 ms (20 MiB/s) plus a 4 MiB one-time burst.
	tp := startPlatform(t, Config{})
	tp.create("shaped", map[string]any{"Tags": map[string]string{TagExpose: strconv.Itoa(port),
		TagNetShape: fmt.Sprintf("size=%d,refill_ms=200,one_time_burst=%d", 4<<20, 4<<20)}})
	tp.invoke("shaped", `{"workload":{"kind":"noop"}}`)
	pid := tp.Instances()[0].Pid
	var budgetAt, endAt time.Duration
	err := inNetns(pid, func() error {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		var got int64
		t0 := time.Now()
		for {
			n, err := c.Read(buf)
			got += int64(n)
			if budgetAt == 0 && got >= 8<<20 {
				budgetAt = time.Since(t0)
			}
			if err != nil {
				break
			}
		}
		endAt = time.Since(t0)
		if got != 18<<20 {
			return fmt.Errorf("received %d bytes, want %d", got, 18<<20)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if budgetAt > 150*time.Millisecond {
		t.Errorf("the first 8 MiB (bucket + one-time burst) should pass at line rate, took %s", budgetAt)
	}
	if steady := endAt - budgetAt; steady < 450*time.Millisecond || steady > 600*time.Millisecond {
		t.Errorf("the next 10 MiB at a 20 MiB/s refill should take ~500 ms, took %s", steady)
	}
}

func TestSharedDirectoryIsVisibleToAllSandboxes(t *testing.T) {
	needSandboxes(t)
	shared := t.TempDir()
	os.Chmod(shared, 0o1777)
	tp := startPlatform(t, Config{SharedDir: shared})
	tp.create("w", nil)
	_, r, body := tp.invoke("w", `{"workload":{"kind":"noop"}}`)
	if !r.OK {
		t.Fatal(string(body))
	}
	// The sandbox sees the host directory at /mnt/shared: check through its mount namespace.
	pid := tp.Instances()[0].Pid
	os.WriteFile(filepath.Join(shared, "from-host"), []byte("x"), 0o644)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/root/mnt/shared/from-host", pid)); err != nil {
		t.Fatalf("shared directory not mounted in the sandbox: %v", err)
	}
}

func TestTokenGuardsTheAPI(t *testing.T) {
	tp := startPlatform(t, Config{Token: "s3cret"})
	resp, _ := tp.call("GET", "/2015-03-31/functions/", nil, nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-ErrorType") != "UnrecognizedClientException" {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	sigv4 := "AWS4-HMAC-SHA256 Credential=s3cret/20260101/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=00"
	for _, auth := range []string{sigv4, "Bearer s3cret"} {
		if resp, _ := tp.call("GET", "/2015-03-31/functions/", nil, map[string]string{"Authorization": auth}); resp.StatusCode != 200 {
			t.Errorf("%q: %d", auth, resp.StatusCode)
		}
	}
	wrong := strings.Replace(sigv4, "s3cret", "guess", 1)
	if resp, _ := tp.call("GET", "/2015-03-31/functions/", nil, map[string]string{"Authorization": wrong}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("wrong token accepted: %d", resp.StatusCode)
	}
}

// crashingRuntime is a Lambda custom runtime that takes an invocation and dies, as a function
// that segfaults would.
const crashingRuntime = `#!/bin/sh
curl -s -o /dev/null "http://$AWS_LAMBDA_RUNTIME_API/2018-06-01/runtime/invocation/next"
kill -SEGV $$
`

func TestRuntimeCrashMidInvocationIsAFunctionError(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("needs curl in the sandbox's /usr")
	}
	tp := startPlatform(t, Config{})
	req := map[string]any{"FunctionName": "crash", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"bootstrap": []byte(crashingRuntime)}))}}
	if resp, body := tp.call("POST", "/2015-03-31/functions", req, nil); resp.StatusCode != 201 {
		t.Fatal(string(body))
	}
	waitReady(t, tp.Platform, "crash")
	for i := 0; i < 2; i++ { // and again: the platform recovers with a fresh instance
		resp, _, body := tp.invoke("crash", `{}`)
		if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || !strings.Contains(string(body), "Runtime.ExitError") {
			t.Fatalf("crash %d: %d %s", i, resp.StatusCode, body)
		}
	}
	if n := len(tp.Instances()); n != 0 {
		t.Fatalf("crashed instances must be gone, %d left", n)
	}
}

func TestSandboxKilledFromOutsideDuringInvocation(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.create("victim", nil)
	tp.invoke("victim", `{"workload":{"kind":"noop"}}`)
	pid := tp.Instances()[0].Pid
	go func() {
		time.Sleep(300 * time.Millisecond)
		syscall.Kill(pid, syscall.SIGKILL) // an operator, or the kernel, kills the sandbox
	}()
	resp, _, body := tp.invoke("victim", `{"workload":{"kind":"spin","iterations":100000000000}}`)
	if resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || !strings.Contains(string(body), "Runtime.ExitError") {
		t.Fatalf("killed sandbox: %s", body)
	}
	if _, r, _ := tp.invoke("victim", `{"workload":{"kind":"noop"}}`); !r.OK || !r.Cold {
		t.Fatal("the next invocation should get a fresh instance")
	}
}
