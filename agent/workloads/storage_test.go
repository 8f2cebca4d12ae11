package workloads

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// --- kv against a real redis-server ------------------------------------------------------

func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (scripts/setup.sh installs it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--dir", dir, "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}

func TestKVRedisPutGetDrop(t *testing.T) {
	url := startRedis(t)
	put := &KV{Op: "put", Endpoint: url, ItemSize: 100, CountIn: ptr(int64(50)), ParallelismIn: ptr(4), Index: 2}
	if err := put.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := put.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(KVResult)
	if r.Requests.OK != 50 || r.Requests.Attempts != 50 || r.Bytes != 5000 || r.FirstKey != "faascope:2:0" || r.Latency.Count != 50 {
		t.Errorf("put: %+v", r)
	}
	get := &KV{Op: "get", Endpoint: url, ItemSize: 100, CountIn: ptr(int64(50)), Index: 2, Prepare: ptr(false), Drop: ptr(true)}
	if err := get.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err = get.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := out.(KVResult); g.Bytes != 5000 || !g.Dropped || !g.ClientReused {
		t.Errorf("get: %+v", g)
	}
	// Dropped: a second get fails with a key-naming IOError, or is counted with on_error=count.
	get2 := &KV{Op: "get", Endpoint: url, ItemSize: 100, Index: 2, Prepare: ptr(false)}
	_ = get2.Validate()
	if _, err := get2.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "faascope:2:0") {
		t.Errorf("missing key: %v", err)
	}
	get2 = &KV{Op: "get", Endpoint: url, ItemSize: 100, Index: 2, Prepare: ptr(false), OnError: "count", CountIn: ptr(int64(3))}
	_ = get2.Validate()
	out, err = get2.Run(context.Background())
	if err != nil || out.(KVResult).Requests.Failed != 3 || out.(KVResult).ErrorSample == nil {
		t.Errorf("on_error=count: %+v %v", out, err)
	}
}

func TestKVRedisRetriesAreCounted(t *testing.T) {
	// Nothing listens there: connection refused is retryable, so 3 attempts, 2 retries.
	k := &KV{Op: "put", Endpoint: "redis://127.0.0.1:1/0", RetryParams: RetryParams{MaxAttemptsIn: ptr(3), MaxBackoffMsIn: ptr(int64(5))}, OnError: "count"}
	if err := k.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := k.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(KVResult)
	if r.Requests.Failed != 1 || r.Requests.Attempts != 3 || r.Requests.Retries != 2 || r.Retry.Mode != "standard" {
		t.Errorf("%+v", r.Requests)
	}
}

// --- validation --------------------------------------------------------------------------

func TestStorageValidationNamesTheField(t *testing.T) {
	t.Setenv("FAASCOPE_S3_BUCKET", "")
	t.Setenv("FAASCOPE_REDIS_URL", "")
	t.Setenv("FAASCOPE_NETWORK_SINK", "")
	t.Setenv("FAASCOPE_SHARED_DIR", t.TempDir())
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "")
	cases := []struct {
		w     Workload
		field string
	}{
		{&Object{Op: "put"}, "workload.bucket"},
		{&Object{Op: "put", Bucket: "b", API: "gcs"}, "workload.api"},
		{&Object{Op: "put", Bucket: "b", CountIn: ptr(int64(0))}, "workload.count"},
		{&Object{Op: "put", Bucket: "b", ParallelismIn: ptr(2000)}, "workload.parallelism"},
		{&Object{Op: "put", Bucket: "b", Endpoint: "ftp://x"}, "workload.endpoint"},
		{&Object{Op: "put", Bucket: "b", AWSAccess: AWSAccess{AccessKeyID: "a"}}, "workload.access_key_id"},
		{&Object{Op: "put", Bucket: "b", RetryParams: RetryParams{MaxAttemptsIn: ptr(3), RetryMode: "none"}}, "workload.retry_mode"},
		{&Object{Op: "put", Bucket: "b", ObjectSize: MaxObjectSize + 1}, "workload.object_size"},
		{&Object{Bucket: "b"}, "workload.op"},
		{&KV{Op: "get"}, "workload.endpoint"},
		{&KV{Op: "get", Endpoint: "redis://x:1", Table: "t"}, "workload.backend"},
		{&KV{Op: "get", Backend: "dynamodb"}, "workload.table"},
		{&KV{Op: "get", Endpoint: "redis://x:1", ItemSize: MaxItemSize + 1}, "workload.item_size"},
		{&KV{Op: "get", Endpoint: "redis://x:1", RetryParams: RetryParams{RetryMode: "adaptive", MaxAttemptsIn: ptr(2)}}, "workload.retry_mode"},
		{&SharedFS{Root: "/etc", FileIO: FileIO{Op: "write", FileSize: 1, IOSize: 1}}, "workload.root"},
		{&SharedFS{Mode: "shared", FileIO: FileIO{Op: "write", FileSize: 1, IOSize: 1, Drop: ptr(true)}}, "workload.drop"},
		{&SharedFS{Mode: "shared", FileIO: FileIO{Op: "write", FileSize: 1, IOSize: 1, Engine: "dd"}}, "workload.engine"},
		{&SharedFS{FileIO: FileIO{Op: "write", FileSize: 1, IOSize: 1, Path: "../x"}}, "workload.path"},
		{&SharedFS{FileIO: FileIO{Op: "write", FileSize: 1000, IOSize: 1000, Direct: true}}, "workload.io_size"},
		{&SharedFS{Mode: "shared", Index: 1, FileIO: FileIO{Op: "write", FileSize: 1000, IOSize: 512, Direct: true}}, "workload.file_size"},
		{&Network{}, "workload.sink"},
		{&Network{Sink: "nohost"}, "workload.sink"},
		{&Network{Sink: "h:1", IntervalMsIn: ptr(int64(1)), DurationMsIn: ptr(int64(900000))}, "workload.interval_ms"},
		{&Network{Sink: "h:1", ConnectionsIn: ptr(0)}, "workload.connections"},
		{&Transfer{}, "workload.function"},
		{&Transfer{Function: "f", Payload: "x"}, "workload.hop"},
		{&Transfer{Function: "f", Hop: 1, PayloadSize: 2, Payload: "x"}, "workload.payload"},
		{&Transfer{Function: "f", Via: "inline", BlobParams: BlobParams{Bucket: "b"}}, "workload.via"},
		{&Transfer{Function: "f", Hop: 2, ChainLengthIn: ptr(2)}, "workload.hop"},
		{&Transfer{Function: "f", PayloadSize: MaxInlinePayload + 1}, "workload.payload_size"},
		{&App{}, "workload.shape"},
		{&App{Shape: "sort", Storage: "tmp", InputSizeIn: ptr(int64(150))}, "workload.input_size"},
		{&App{Shape: "sort", Storage: "tmp", OutputSizeIn: ptr(int64(5))}, "workload.output_size"},
		{&App{Shape: "inference", Storage: "tmp", InputSizeIn: ptr(int64(1000))}, "workload.input_size"},
		{&App{Shape: "video", Storage: "tmp", LayersIn: ptr(3)}, "workload.layers"},
		{&App{Shape: "video", Storage: "tmp", BlobParams: BlobParams{Bucket: "b"}}, "workload.endpoint"},
		{&App{Shape: "video", Storage: "object"}, "workload.bucket"},
	}
	for _, c := range cases {
		err := c.w.Validate()
		e, ok := err.(*Error)
		if !ok || e.Type != InvalidRequest || !strings.HasPrefix(e.Message, c.field+": ") {
			t.Errorf("%T %+v: got %v, want InvalidRequest naming %s", c.w, c.w, err, c.field)
		}
	}
}

// --- sharedfs ----------------------------------------------------------------------------

// SharedFS embeds FileIO's parameters instead of copying them: its request is still the one
// flat object it was when the fields were copied (these bytes are what json.Marshal wrote for
// the copied struct), "kind" is SharedFS's own, and every parameter decodes into the embedded
// FileIO.
func TestSharedFSRequestIsFileIOsParametersFlat(t *testing.T) {
	const flat = `{"kind":"sharedfs","root":"/mnt/x","mode":"shared","index":3,"engine":"native","op":"write","pattern":"random","file_size":8192,"io_size":4096,"direct":true,"fsync":"end","source":"urandom","path":"p.dat","prepare":true,"drop":false,"seed":5}`
	var s SharedFS
	dec := json.NewDecoder(strings.NewReader(flat))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	want := FileIO{Engine: "native", Op: "write", Pattern: "random", FileSize: 8192, IOSize: 4096, Direct: true,
		Fsync: "end", Source: "urandom", Path: "p.dat", Prepare: ptr(true), Drop: ptr(false), Seed: 5}
	got := s.FileIO
	if s.Kind != "sharedfs" || s.Root != "/mnt/x" || s.Mode != "shared" || s.Index != 3 || got.Kind != "" ||
		got.Engine != want.Engine || got.Op != want.Op || got.Pattern != want.Pattern || got.FileSize != want.FileSize ||
		got.IOSize != want.IOSize || got.Direct != want.Direct || got.Fsync != want.Fsync || got.Source != want.Source ||
		got.Path != want.Path || got.Prepare == nil || !*got.Prepare || got.Drop == nil || *got.Drop || got.Seed != want.Seed {
		t.Fatalf("decoded %+v (FileIO %+v)", s, got)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != flat {
		t.Errorf("marshalled\n%s\nwant\n%s", b, flat)
	}
}

func TestSharedFSSharedFileRegionsAndPrivateFiles(t *testing.T) {
	root := t.TempDir()
	t.Setenv("FAASCOPE_SHARED_DIR", root)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := int64(0); i < 4; i++ {
		wg.Add(1)
		go func(i int64) {
			defer wg.Done()
			s := &SharedFS{Mode: "shared", Index: i, FileIO: FileIO{Op: "write", FileSize: 8192, IOSize: 4096, Source: "urandom"}}
			if err := s.Validate(); err != nil {
				errs <- err
				return
			}
			out, err := s.Run(context.Background())
			if err == nil && out.(SharedFSResult).RegionOffset != i*8192 {
				err = fmt.Errorf("region %d", out.(SharedFSResult).RegionOffset)
			}
			if err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, DefaultSharedPath))
	if err != nil || fi.Size() != 4*8192 {
		t.Fatalf("shared file: %v %v", fi, err)
	}
	// A read of region 2 with prepare lays out only that region and never truncates.
	s := &SharedFS{Mode: "shared", Index: 2, FileIO: FileIO{Op: "read", FileSize: 8192, IOSize: 4096}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(context.Background())
	if err != nil || out.(SharedFSResult).Bytes != 8192 || out.(SharedFSResult).Dropped {
		t.Fatalf("read: %+v %v", out, err)
	}
	if fi, _ := os.Stat(filepath.Join(root, DefaultSharedPath)); fi.Size() != 4*8192 {
		t.Errorf("shared file changed size to %d", fi.Size())
	}
	p := &SharedFS{Index: 9, FileIO: FileIO{Op: "write", FileSize: 4096, IOSize: 4096}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, DefaultSharedPath+".9")); err != nil {
		t.Error(err)
	}
	// A symlink out of the root is refused like fileio refuses one out of /tmp.
	if err := os.Symlink("/etc", filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	bad := &SharedFS{FileIO: FileIO{Op: "write", FileSize: 1, IOSize: 1, Path: "out/x"}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "escapes the shared directory") {
		t.Errorf("symlink escape: %v", err)
	}
}

// --- network against an in-test sink speaking the faascope sink protocol ------------------

func startSink(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	sessions := map[string]time.Time{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				r := bufio.NewReader(c)
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				var h sinkHeader
				if json.Unmarshal(line, &h) != nil || h.Version != 1 {
					fmt.Fprintln(c, `{"ok":false,"error":"bad header"}`)
					return
				}
				mu.Lock()
				start, ok := sessions[h.Session]
				if !ok {
					start = time.Now()
					sessions[h.Session] = start
				}
				mu.Unlock()
				fmt.Fprintln(c, `{"ok":true}`)
				iv := time.Duration(h.IntervalMs) * time.Millisecond
				if h.Mode == "send" {
					buf := make([]byte, 64<<10)
					for sent := int64(0); sent < h.Bytes; {
						n, err := c.Write(buf[:min(int64(len(buf)), h.Bytes-sent)])
						if err != nil {
							return
						}
						sent += int64(n)
					}
					return
				}
				var samples []int64
				var total int64
				buf := make([]byte, 64<<10)
				for {
					n, err := r.Read(buf)
					if n > 0 {
						k := int(time.Since(start) / iv)
						for len(samples) <= k {
							samples = append(samples, 0)
						}
						samples[k] += int64(n)
						total += int64(n)
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						return
					}
				}
				b, _ := json.Marshal(sinkReply{OK: true, Bytes: total, IntervalMs: h.IntervalMs, Samples: samples, LastNs: 1})
				c.Write(append(b, '\n'))
			}(c)
		}
	}()
	return l.Addr().String()
}

func TestNetworkBothDirectionsAgainstASink(t *testing.T) {
	sink := startSink(t)
	n := &Network{Direction: "both", Sink: sink, Bytes: 8 << 20, ConnectionsIn: ptr(3), IntervalMsIn: ptr(int64(5))}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := n.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(NetworkResult)
	for _, d := range []*DirectionSeries{r.In, r.Out} {
		var sum int64
		for _, s := range d.Samples {
			sum += s
		}
		// 8 MiB split over 3 connections rounds up per connection.
		if d.Bytes < 8<<20 || d.Bytes > 8<<20+3 || sum != d.Bytes {
			t.Errorf("%s: bytes %d, samples sum %d", d.SampledAt, d.Bytes, sum)
		}
	}
	if r.In.SampledAt != "agent" || r.Out.SampledAt != "sink" || r.Ops != 6 {
		t.Errorf("%+v", r)
	}
	bad := &Network{Sink: "127.0.0.1:1", Bytes: 10}
	_ = bad.Validate()
	if _, err := bad.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Errorf("bad sink: %v", err)
	}
}

// --- app on /tmp ---------------------------------------------------------------------------

func TestAppShapesOnTmp(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, a := range []*App{
		{Shape: "sort", Storage: "tmp", InputSizeIn: ptr(int64(100_000))},
		{Shape: "video", Storage: "tmp", InputSizeIn: ptr(int64(3 << 20))},
		{Shape: "inference", Storage: "tmp", InputSizeIn: ptr(int64(64 << 10)), LayersIn: ptr(4)},
	} {
		var sums []string
		for i := 0; i < 2; i++ {
			c := *a
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			out, err := c.Run(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", a.Shape, err)
			}
			r := out.(AppResult)
			if r.ReadBytes != c.InputSize || r.WriteBytes != c.OutputSize || r.ComputeS <= 0 || !r.Dropped {
				t.Errorf("%s: %+v", a.Shape, r)
			}
			sums = append(sums, r.Checksum)
		}
		if sums[0] != sums[1] {
			t.Errorf("%s: checksums differ %v", a.Shape, sums)
		}
	}
	// The sorted output really is sorted.
	a := &App{Shape: "sort", Storage: "tmp", InputSizeIn: ptr(int64(10_000))}
	_ = a.Validate()
	out, _ := a.compute(a.input())
	for i := recordSize; i < len(out); i += recordSize {
		if string(out[i-recordSize:i-recordSize+keySize]) > string(out[i:i+keySize]) {
			t.Fatal("not sorted")
		}
	}
}

// --- transfer through an imitation of the Lambda Invoke API --------------------------------

func TestTransferChainInline(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/functions/chain/invocations") || r.Header.Get("X-Amz-Invocation-Type") != "RequestResponse" {
			http.Error(w, "bad path", 404)
			return
		}
		mu.Lock()
		calls++
		mu.Unlock()
		received := time.Now().UnixNano()
		var req struct {
			Workload json.RawMessage `json:"workload"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		dec := json.NewDecoder(strings.NewReader(string(req.Workload)))
		dec.DisallowUnknownFields()
		var tr Transfer
		if err := dec.Decode(&tr); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		resp := map[string]any{"ok": true, "cold": true, "instance": map[string]any{"id": fmt.Sprintf("i%d", tr.Hop)},
			"timings": map[string]any{"received_ns": received}, "error": nil}
		if err := tr.Validate(); err != nil {
			resp["ok"], resp["error"] = false, err
		} else if out, err := tr.Run(r.Context()); err != nil {
			resp["ok"], resp["error"] = false, AsError(err)
		} else {
			resp["workload"] = out
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	tr := &Transfer{Function: "chain", LambdaEndpoint: srv.URL, ChainLengthIn: ptr(4), PayloadSize: 1000}
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(TransferResult)
	if len(r.Hops) != 4 || calls != 3 || r.Bytes != 3000 {
		t.Fatalf("%+v calls=%d", r, calls)
	}
	for i, h := range r.Hops {
		if h.Hop != i || (i > 0 && (h.TransferS == nil || *h.TransferS <= 0 || *h.InstanceID != fmt.Sprintf("i%d", i))) {
			t.Errorf("hop %d: %+v", i, h)
		}
		if i < 3 && (h.InvokeNs == nil || *h.InvokeNs > r.Hops[i+1].StartNs) {
			t.Errorf("hop %d invoked after the next started", i)
		}
	}
	if r.Hops[3].InvokeNs != nil {
		t.Error("the last hop invoked something")
	}
}
