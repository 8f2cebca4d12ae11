package platform

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
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
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests of the limits that keep one function or one client from taking the platform down
// (limits.go, codeupload.go; issue #14). The test process is the platform, so its descriptor
// count and its peak resident memory are the platform's.

// The connection hog: the test binary re-executed with FAASCOPE_TEST_CONNHOG set opens
// connections to a Runtime API as a misbehaving runtime would, from inside the sandbox's
// network namespace when given one. It runs from init, before TestMain, and exits.
func init() {
	if spec := os.Getenv("FAASCOPE_TEST_CONNHOG"); spec != "" {
		os.Exit(connHog(spec))
	}
}

// connHog: spec is "netns-path|address|count". Each connection asks for /next; the hog reports
// what it got back, then holds every connection open until its stdin closes.
func connHog(spec string) int {
	parts := strings.Split(spec, "|")
	n, _ := strconv.Atoi(parts[2])
	if parts[0] != "" {
		runtime.LockOSThread() // sockets are made in the namespace of the thread that makes them
		f, err := os.Open(parts[0])
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			fmt.Println("error", err)
			return 1
		}
	}
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", parts[1], 2*time.Second)
		if err != nil {
			continue
		}
		conns = append(conns, c)
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			fmt.Fprintf(c, "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(3 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			what := "no-answer"
			if f := strings.Fields(line); len(f) >= 2 {
				what = f[1]
			} else if err != nil && !os.IsTimeout(err) {
				what = "closed"
			}
			mu.Lock()
			got[what]++
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	b, _ := json.Marshal(got)
	fmt.Printf("ready %d %s\n", len(conns), b)
	io.Copy(io.Discard, os.Stdin)
	return 0
}

func countFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// settledFDs waits until the platform has dealt with what is in flight (accepts, relays,
// refusals): the descriptor count stops changing.
func settledFDs(t *testing.T) int {
	last, same := countFDs(t), 0
	for i := 0; i < 100 && same < 5; i++ {
		time.Sleep(100 * time.Millisecond)
		if n := countFDs(t); n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
	return last
}

func instanceOf(t *testing.T, p *Platform, function string) *Instance {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, in := range p.instances {
		if in.Function == function {
			return in
		}
	}
	t.Fatalf("no instance of %s", function)
	return nil
}

// runtimeAPITarget is where a runtime of in reaches its Runtime API: 127.0.0.1:9001 in the
// sandbox's own network namespace, or the host-side address when it shares the host's network.
func runtimeAPITarget(in *Instance) (netns, addr string) {
	if in.Sandbox != nil && in.Sandbox.Net != nil {
		return fmt.Sprintf("/proc/%d/ns/net", in.Sandbox.Pid), "127.0.0.1:" + strconv.Itoa(RuntimeAPIPort)
	}
	return "", in.RuntimeAPIAddr()
}

// runtimeAPIDialer connects as a runtime of in does: inside its network namespace when it has
// one (the socket stays in the namespace it was made in).
func runtimeAPIDialer(in *Instance) func() (net.Conn, error) {
	netns, addr := runtimeAPITarget(in)
	return func() (c net.Conn, err error) {
		if netns == "" {
			return net.Dial("tcp", addr)
		}
		nerr := inNetns(in.Sandbox.Pid, func() error {
			c, err = net.Dial("tcp", addr)
			return nil
		})
		if nerr != nil {
			return nil, nerr
		}
		return c, err
	}
}

// Item 1 of issue #14: one function holding thousands of Runtime API connections used every
// descriptor the platform had, and every other function's invocations and CreateFunction
// failed. The platform's descriptor limit is lowered here to what 2,000 relayed connections
// overflow (each cost three descriptors) and stays far above what the platform needs.
func TestRuntimeAPIConnectionFloodLeavesThePlatformUp(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("hog", nil)
	if _, r, body := tp.invoke("hog", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("hog's first invoke: %s", body)
	}
	netns, addr := runtimeAPITarget(instanceOf(t, tp.Platform, "hog"))

	base := settledFDs(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = uint64(base + 1500)
	if low.Cur < lim.Cur {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	}

	const conns = 2000
	hog := exec.Command(os.Args[0], "-test.run=^$")
	hog.Env = append(os.Environ(), fmt.Sprintf("FAASCOPE_TEST_CONNHOG=%s|%s|%d", netns, addr, conns))
	stdin, _ := hog.StdinPipe()
	stdout, _ := hog.StdoutPipe()
	hog.Stderr = os.Stderr
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); hog.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		t.Logf("hog: %s", strings.TrimSpace(line))
		if !strings.HasPrefix(line, "ready ") {
			t.Fatalf("hog failed: %q", line)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("hog did not get its connections answered")
	}

	// Per sandbox the platform holds at most 32 Runtime API sockets (limits.go).
	if fds := settledFDs(t); fds-base > 100 {
		t.Errorf("%d connections of one sandbox took %d of the platform's descriptors (from %d to %d)", conns, fds-base, base, fds)
	}
	resp, body := tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "other",
		"Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "bootstrap", "MemorySize": 256,
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("CreateFunction of another function during the flood: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "other")
	if _, r, body := tp.invoke("other", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("another function's invoke during the flood: %s", body)
	}
	// The flooding function itself keeps working too: its runtime's own connection was
	// admitted first, and the flood's /next requests were refused rather than queued to steal
	// its invocations.
	if _, r, body := tp.invoke("hog", `{"workload":{"kind":"noop"}}`); !r.OK || r.Cold {
		t.Fatalf("the flooded function's warm invoke: %s", body)
	}
}

// A second concurrent /next is refused at once (403 InvalidStateTransition), and a /response
// body that stalls is cut instead of holding its connection.
func TestRuntimeAPIRefusesASecondNextAndCutsStalledBodies(t *testing.T) {
	defer func(d time.Duration) { runtimeAPIBodyTimeout = d }(runtimeAPIBodyTimeout)
	runtimeAPIBodyTimeout = time.Second
	tp := startPlatform(t, Config{})
	tp.create("poll", nil)
	if _, r, body := tp.invoke("poll", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("first invoke: %s", body)
	}
	in := instanceOf(t, tp.Platform, "poll")
	dial := runtimeAPIDialer(in)
	base := "http://runtime-api/2018-06-01/runtime"
	// The agent's own /next is waiting by now (it polls right after its response).
	deadline := time.Now().Add(5 * time.Second)
	for !in.polling.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) { return dial() }}}
	resp, err := client.Get(base + "/invocation/next")
	if err != nil {
		t.Fatalf("a second /next was not answered: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "InvalidStateTransition") {
		t.Fatalf("second /next: %d %s", resp.StatusCode, b)
	}

	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /2018-06-01/runtime/invocation/x/response HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	io.Copy(io.Discard, c) // ends when the platform closes the connection
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a stalled /response body held its connection for %s", d)
	} else {
		t.Logf("a stalled /response body was cut after %s", d.Round(time.Millisecond))
	}
	if _, r, body := tp.invoke("poll", `{"workload":{"kind":"noop"}}`); !r.OK || r.Cold {
		t.Fatalf("warm invoke after the refusals: %s", body)
	}
}

// repeatReader is an endless stream of one byte: a large body that costs the client nothing.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func codeBody(name string, zipChars int64) (io.Reader, int64) {
	pre := `{"FunctionName":"` + name + `","Runtime":"provided.al2023","Role":"arn:aws:iam::000000000000:role/r","Handler":"bootstrap","Code":{"ZipFile":"`
	post := `"}}`
	return io.MultiReader(strings.NewReader(pre), io.LimitReader(repeatReader('A'), zipChars), strings.NewReader(post)),
		int64(len(pre)) + zipChars + int64(len(post))
}

func selfHWM(t *testing.T) int64 {
	t.Helper()
	n := vmHWM("/proc/self/status") // memory.go
	if n == 0 {
		t.Fatal("no VmHWM")
	}
	return n
}

func stagingLeft(t *testing.T, p *Platform) []string {
	es, _ := os.ReadDir(p.store.stagingDir())
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// Item 2: a 120 MB CreateFunction body is refused with 413 RequestEntityTooLargeException and
// the platform's peak resident memory hardly moves (it was buffered whole: a 900 MiB body left
// the platform at 3–4 GiB).
func TestOversizedCodeBodyIsRefusedWithoutBuffering(t *testing.T) {
	tp := startPlatform(t, Config{})
	runtime.GC()
	debug.FreeOSMemory()
	// "5" resets the peak resident size to the current one (proc(5), clear_refs).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset VmHWM: %v", err)
	}
	before := selfHWM(t)
	for _, known := range []bool{false, true} { // chunked, then with Content-Length
		body, size := codeBody("big", 120<<20)
		req, _ := http.NewRequest("POST", tp.url+"/2015-03-31/functions", body)
		if known {
			req.ContentLength = size
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("content length known=%v: %v", known, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("X-Amzn-ErrorType") != "RequestEntityTooLargeException" {
			t.Fatalf("a 120 MB body (content length known=%v): %d %s %s", known, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), b)
		}
		t.Logf("content length known=%v: %d %s", known, resp.StatusCode, bytes.TrimSpace(b))
	}
	grew := selfHWM(t) - before
	t.Logf("peak resident memory grew by %.1f MiB", float64(grew)/(1<<20))
	if grew > 64<<20 {
		t.Errorf("peak resident memory grew by %d MiB while refusing 120 MB bodies", grew>>20)
	}
	if resp, _ := tp.call("GET", "/2015-03-31/functions/big", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the refused function exists: %d", resp.StatusCode)
	}
	if left := stagingLeft(t, tp.Platform); len(left) > 0 {
		t.Errorf("staging files left: %v", left)
	}
	// A package within the limits still goes through the streaming path byte for byte.
	tp.create("fits", nil)
	if fn, _ := tp.GetFunction(ref("fits")); fn.Config.CodeSha256 != shaOf(agentZip) {
		t.Fatalf("package changed on the way: %s vs %s", fn.Config.CodeSha256, shaOf(agentZip))
	}
}

// Item 2: a body that stalls, or that trickles for longer than the whole-body limit, is cut
// with 408 RequestTimeoutException; the platform does not wait on it for ever.
func TestSlowCodeBodiesAreCut(t *testing.T) {
	defer func(s, tot time.Duration) { bodyStallTimeout, bodyTotalTimeout = s, tot }(bodyStallTimeout, bodyTotalTimeout)
	bodyStallTimeout, bodyTotalTimeout = 500*time.Millisecond, 2*time.Second
	tp := startPlatform(t, Config{})
	for _, tc := range []struct {
		name  string
		every time.Duration // a byte every this long; 0: stall after the first part
	}{{"stalled", 0}, {"trickling", 100 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			go func() {
				if _, err := io.WriteString(pw, `{"FunctionName":"slow","Code":{"ZipFile":"AAAA`); err != nil || tc.every == 0 {
					return
				}
				for {
					time.Sleep(tc.every)
					if _, err := pw.Write([]byte("A")); err != nil {
						return
					}
				}
			}()
			req, _ := http.NewRequest("POST", tp.url+"/2015-03-31/functions", pr)
			done := make(chan *http.Response, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Log(err)
					resp = nil
				}
				done <- resp
			}()
			select {
			case resp := <-done:
				if resp == nil {
					t.Fatal("no answer")
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("X-Amzn-ErrorType") != "RequestTimeoutException" {
					t.Fatalf("%d %s", resp.StatusCode, b)
				}
				t.Logf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
			case <-time.After(10 * time.Second):
				t.Fatal("a slow body was not cut within 10 s")
			}
		})
	}
	if left := stagingLeft(t, tp.Platform); len(left) > 0 {
		t.Errorf("staging files left: %v", left)
	}
}

// zeroZip is a zip of files of zeros, deflated: sizes[i] bytes each, declared truthfully.
func zeroZip(t *testing.T, sizes ...int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, n := range sizes {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("zeros%d", i), Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, io.LimitReader(repeatReader(0), n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Item 3: a zip bomb (a few hundred KiB that unzip to 300 MB) is refused at create and at
// update with Lambda's error, and leaves no file behind; a package whose headers understate its
// data is refused as not a zip; and the unpacking itself stops at the limit, for packages
// stored before the check existed.
func TestZipBombIsRefusedAtUpload(t *testing.T) {
	tp := startPlatform(t, Config{})
	bomb := zeroZip(t, 100<<20, 100<<20, 100<<20)
	t.Logf("bomb: %d bytes zipped, 300 MiB unzipped", len(bomb))
	want := "Unzipped size must be smaller than 262144000 bytes"

	resp, body := tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "bomb",
		"Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "bootstrap",
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(bomb)}}, nil)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-ErrorType") != "InvalidParameterValueException" ||
		!strings.Contains(string(body), want) {
		t.Fatalf("create with a zip bomb: %d %s %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
	}
	if resp, _ := tp.call("GET", "/2015-03-31/functions/bomb", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the refused function exists: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(tp.store.dir, "bomb")); !os.IsNotExist(err) {
		t.Errorf("files of the refused function left: %v", err)
	}

	tp.create("victim", nil)
	resp, body = tp.call("PUT", "/2015-03-31/functions/victim/code", map[string]any{
		"ZipFile": base64.StdEncoding.EncodeToString(bomb)}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
		t.Fatalf("update with a zip bomb: %d %s", resp.StatusCode, body)
	}
	if fn, _ := tp.GetFunction(ref("victim")); fn.Config.CodeSha256 != shaOf(agentZip) || fileSha(t, fn.CodePath) != shaOf(agentZip) {
		t.Errorf("a refused update changed the package")
	}

	// Headers that understate the data: 300 MiB of zeros declared as 1 KiB.
	var raw bytes.Buffer
	zw := zip.NewWriter(&raw)
	var deflated bytes.Buffer
	dw, _ := flate.NewWriter(&deflated, flate.BestSpeed)
	io.Copy(dw, io.LimitReader(repeatReader(0), 300<<20))
	dw.Close()
	w, _ := zw.CreateRaw(&zip.FileHeader{Name: "liar", Method: zip.Deflate, CRC32: 0,
		CompressedSize64: uint64(deflated.Len()), UncompressedSize64: 1024})
	w.Write(deflated.Bytes())
	zw.Close()
	resp, body = tp.call("POST", "/2015-03-31/functions", map[string]any{"FunctionName": "liar",
		"Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "bootstrap",
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(raw.Bytes())}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Could not unzip") {
		t.Fatalf("create with lying headers: %d %s", resp.StatusCode, body)
	}
	if left := stagingLeft(t, tp.Platform); len(left) > 0 {
		t.Errorf("staging files left: %v", left)
	}

	// Unpacking a bomb that got on disk anyway stops at the limit.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bomb.zip"), bomb, 0o644)
	err := unzip(filepath.Join(dir, "bomb.zip"), filepath.Join(dir, "out"))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unzip of a bomb: %v", err)
	}
	var written int64
	filepath.Walk(filepath.Join(dir, "out"), func(_ string, fi os.FileInfo, _ error) error {
		if fi != nil && fi.Mode().IsRegular() {
			written += fi.Size()
		}
		return nil
	})
	if written > maxUnzippedBytes {
		t.Errorf("unzip wrote %d bytes, more than the limit", written)
	}
}

// chunkedReader hands out its data a few bytes at a time, so the splitter meets every escape,
// key and quote split across writes.
type chunkedReader struct {
	data []byte
	i    int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.i++
	n := min(1+r.i%7, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// The streaming split of a code request reads what json.Unmarshal and base64 read before it:
// keys in any case or order, escapes anywhere, the ZipFile only at its own path.
func TestCodeRequestSplitterReadsWhatEncodingJSONReads(t *testing.T) {
	pkg := []byte("PK\x03\x04 any bytes at all, \xff\xfe\x00 with /+ in their base64 ????>>>>")
	b64 := base64.StdEncoding.EncodeToString(pkg)
	if !strings.ContainsAny(b64, "/+") {
		t.Fatal("the package should have / or + in its base64")
	}
	escSlash := strings.ReplaceAll(b64, "/", `\/`)
	lines := b64[:8] + `\n` + b64[8:16] + `\r\n` + b64[16:]
	uEsc := `\u00` + fmt.Sprintf("%x", b64[0]) + b64[1:]
	type req struct {
		FunctionName  string
		Description   string
		Tags          map[string]string
		Code          struct{ S3Bucket string }
		Architectures []string
	}
	good := []struct{ name, body string }{
		{"plain", `{"FunctionName":"f","Code":{"ZipFile":"` + b64 + `"}}`},
		{"zip first", `{"Code":{"S3Bucket":"","ZipFile":"` + b64 + `"},"FunctionName":"f"}`},
		{"escaped slashes", `{"FunctionName":"f","Code":{"ZipFile":"` + escSlash + `"}}`},
		{"line breaks", `{"FunctionName":"f","Code":{"ZipFile":"` + lines + `"}}`},
		{"unicode escape", `{"FunctionName":"f","Code":{"ZipFile":"` + uEsc + `"}}`},
		{"keys in other case", `{"functionname":"f","CODE":{"zipfile":"` + b64 + `"}}`},
		{"escaped key", `{"FunctionName":"f","Code":{"Zip\u0046ile":"` + b64 + `"}}`},
		{"look-alikes elsewhere", ` { "Description" : "a \"}{\" [\\\"ZipFile\": b" , "Tags":{"ZipFile":"not this"},
			"Architectures":["ZipFile"], "FunctionName":"f", "Code" : { "ZipFile" : "` + b64 + `" } } `},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			var want req
			if err := json.Unmarshal([]byte(tc.body), &want); err != nil {
				t.Fatal(err)
			}
			st := functionStore{dir: t.TempDir()}
			up, _ := st.newUpload()
			var got req
			up, err := readCodeBody(&chunkedReader{data: []byte(tc.body)}, up, []string{"Code", "ZipFile"}, &got, nil)
			if err != nil || up == nil {
				t.Fatalf("up=%v err=%v", up, err)
			}
			defer up.discard()
			staged, err := up.finish()
			if err != nil {
				t.Fatal(err)
			}
			if staged.sha256 != shaOf(pkg) || staged.size != int64(len(pkg)) {
				t.Errorf("package: %d bytes, sha %s", staged.size, staged.sha256)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || got.FunctionName != "f" {
				t.Errorf("fields: %+v, encoding/json: %+v", got, want)
			}
		})
	}
	bad := []struct{ name, body, want string }{
		{"not base64", `{"Code":{"ZipFile":"AB!="}}`, "must be a base64-encoded zip file"},
		{"unpadded", `{"Code":{"ZipFile":"AAA"}}`, "must be a base64-encoded zip file"},
		{"data after padding", `{"Code":{"ZipFile":"AA==AAAA"}}`, "must be a base64-encoded zip file"},
		{"twice", `{"Code":{"ZipFile":"AAAA","zipFile":"AAAA"}}`, "given twice"},
		{"unterminated", `{"Code":{"ZipFile":"AAAA`, "unterminated"},
		{"malformed", `{"Code":{"ZipFile":"AAAA"}`, "malformed JSON"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			st := functionStore{dir: t.TempDir()}
			up, _ := st.newUpload()
			var got req
			_, err := readCodeBody(&chunkedReader{data: []byte(tc.body)}, up, []string{"Code", "ZipFile"}, &got, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
			if left, _ := os.ReadDir(st.stagingDir()); len(left) > 0 {
				t.Errorf("staging file left")
			}
		})
	}
}

func TestRaiseFDLimitKeepsSandboxesAtTheOriginal(t *testing.T) {
	var orig unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	before, after, err := RaiseFDLimit()
	if err != nil {
		t.Fatal(err)
	}
	if after < before || before != orig.Cur {
		t.Fatalf("before %d (getrlimit %d), after %d", before, orig.Cur, after)
	}
	var now unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &now); err != nil {
		t.Fatal(err)
	}
	if now.Cur != after {
		t.Fatalf("soft limit %d, RaiseFDLimit said %d", now.Cur, after)
	}
	if os.Geteuid() != 0 || after == before {
		t.Skip("not root or nothing to raise: no sandbox limit to restore")
	}
	cmd := exec.Command("cat")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	if err := restoreSandboxFDLimit(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	var child unix.Rlimit
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NOFILE, nil, &child); err != nil {
		t.Fatal(err)
	}
	if child != *sandboxFDLimit {
		t.Fatalf("child limit %+v, want the original %+v", child, *sandboxFDLimit)
	}
}

// Issue #29: 22,000 idle connections to the control API reached the platform's descriptor limit
// and ListFunctions waited 13.4 s. With the cap lowered to 32: after 300 idle connections (never
// a request) at most 32 are still open and ListFunctions answers at once; with all 32 holding a
// request in flight a new connection is refused with the Lambda API's 429
// TooManyRequestsException, and once they end the API answers again.
func TestControlAPIConnectionCapKeepsListFunctionsAnswering(t *testing.T) {
	const maxConns, flood = 32, 300
	defer func(n int) { controlAPIMaxConns = n }(controlAPIMaxConns)
	controlAPIMaxConns = maxConns
	tp := startPlatform(t, Config{})
	addr := strings.TrimPrefix(tp.url, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	client := func() *http.Client { return &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second} }
	list := func(c *http.Client) (int, time.Duration) {
		t0 := time.Now()
		resp, err := c.Get(tp.url + fnPath)
		if err != nil {
			t.Fatalf("ListFunctions: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(t0)
	}
	idle := make([]net.Conn, flood)
	for i := range idle {
		idle[i] = dial()
	}
	if code, took := list(client()); code != http.StatusOK || took > 2*time.Second {
		t.Fatalf("ListFunctions behind %d idle connections: %d after %s", flood, code, took)
	}
	// Which idle connections the platform still holds: a closed one reads EOF at once.
	deadline := time.Now().Add(500 * time.Millisecond)
	var open sync.WaitGroup
	var mu sync.Mutex
	stillOpen := 0
	for _, c := range idle {
		open.Add(1)
		go func() {
			defer open.Done()
			c.SetReadDeadline(deadline)
			var b [1]byte
			if _, err := c.Read(b[:]); errors.Is(err, os.ErrDeadlineExceeded) {
				mu.Lock()
				stillOpen++
				mu.Unlock()
			}
		}()
	}
	open.Wait()
	if stillOpen > maxConns {
		t.Errorf("%d of %d idle connections still open, cap %d", stillOpen, flood, maxConns)
	}
	// Every slot busy: a request body that never comes holds each (the body's stall timeout is 30 s).
	busy := make([]net.Conn, maxConns)
	for i := range busy {
		busy[i] = dial()
		io.WriteString(busy[i], "POST "+fnPath+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	}
	time.Sleep(300 * time.Millisecond) // the server reads their headers: all active
	c := dial()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a connection past the cap, all busy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Amzn-ErrorType") != "TooManyRequestsException" {
		t.Fatalf("a connection past the cap, all busy: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	t.Logf("%d of %d idle connections left open; past the cap: %d %s", stillOpen, flood, resp.StatusCode, body)
	for _, c := range busy {
		c.Close()
	}
	time.Sleep(100 * time.Millisecond) // their handlers see the end of the body and let go
	if code, took := list(client()); code != http.StatusOK {
		t.Fatalf("ListFunctions once the busy connections ended: %d after %s", code, took)
	}
	if controlAPIConnCap(20000) > 20000/4 || controlAPIConnCap(1<<20) != maxControlAPIConns {
		t.Errorf("cap %d for 20,000 descriptors, %d for 2^20", controlAPIConnCap(20000), controlAPIConnCap(1<<20))
	}
}
