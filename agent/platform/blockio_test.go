package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fioMedian4K runs fio's 4 KiB random direct reads (one at a time, as the agent's) on a file in
// dir and returns the median completion latency in seconds.
func fioMedian4K(t *testing.T, dir string) float64 {
	t.Helper()
	out, err := exec.Command("fio", "--name=ref", "--filename="+filepath.Join(dir, "fio.dat"), "--direct=1",
		"--rw=randread", "--bs=4k", "--iodepth=1", "--ioengine=psync", "--size=32m", "--io_size=32m",
		"--output-format=json").Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	var res struct {
		Jobs []struct {
			Read struct {
				Clat struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Jobs) != 1 {
		t.Fatalf("fio output: %v %s", err, out)
	}
	return res.Jobs[0].Read.Clat.Percentile["50.000000"] / 1e9
}

func workloadFloat(t *testing.T, r agentReply, body []byte, path ...string) float64 {
	t.Helper()
	var cur any = r.Workload
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %s", path, body)
		}
		cur = m[k]
	}
	f, ok := cur.(float64)
	if !ok {
		t.Fatalf("no number at %v in %s", path, body)
	}
	return f
}

// Direct reads of a lambda sandbox's /tmp reach the disk: their median latency is no lower
// than fio's on the disk that holds the image, measured side by side. Uncalibrated, so only the
// loop device's direct I/O is on trial (a throttle would make them slower anyway); before it,
// the loop device served them from the host's page cache, faster than the disk.
func TestTmpDirectReadsAreNotFasterThanTheDisk(t *testing.T) {
	needSandboxes(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed (scripts/setup.sh installs it)")
	}
	tp := startPlatform(t, Config{})
	// 1,769 MB: one whole vCPU, so the CPU quota does not pace the reads (and a loaded machine
	// does not time them out)
	tp.create("dio", map[string]any{"MemorySize": 1769, "Timeout": 300})
	before := fioMedian4K(t, tp.cfg.DataDir) // the data directory holds the /tmp images
	_, r, body := tp.invoke("dio", `{"workload":{"kind":"fileio","op":"read","pattern":"random","direct":true,`+
		`"file_size":33554432,"io_size":4096}}`)
	if !r.OK {
		t.Fatalf("read: %s", body)
	}
	after := fioMedian4K(t, tp.cfg.DataDir)
	if r.Workload["direct_effective"] != true {
		t.Fatalf("direct I/O not in effect: %s", body)
	}
	sandbox := workloadFloat(t, r, body, "latency", "p50_s")
	disk := min(before, after)
	t.Logf("4 KiB random direct reads, median: sandbox /tmp %.1f µs, fio on the disk %.1f / %.1f µs",
		sandbox*1e6, before*1e6, after*1e6)
	if sandbox < disk {
		t.Fatalf("the sandbox's direct reads (%.1f µs) beat the disk's (%.1f µs): served from a cache", sandbox*1e6, disk*1e6)
	}
	st := tp.Status()
	if !st.TmpDirectIO {
		t.Fatalf("status says /tmp has no direct I/O: %+v", st)
	}
}

// residentBytes is how much of a file the host's page cache holds.
func residentBytes(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if fi.Size() == 0 {
		return 0
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)),
		uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	var n int64
	for _, v := range vec {
		if v&1 != 0 {
			n += int64(page)
		}
	}
	return n
}

// A function writing three times its memory through /tmp's page cache is not killed: the
// kernel writes back and reclaims within the sandbox's memory cgroup, whose usage never passes
// the limit. With direct I/O on the loop device the host's page cache holds no second copy of
// what was written (the image's pages are not resident).
func TestTmpPageCacheStaysInTheMemoryLimit(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.create("pc", map[string]any{"MemorySize": 128, "Timeout": 300})
	const size = 384 << 20
	_, r, body := tp.invoke("pc", fmt.Sprintf(`{"workload":{"kind":"fileio","op":"write","file_size":%d,"io_size":1048576}}`, size))
	if !r.OK {
		t.Fatalf("a 384 MiB buffered write in a 128 MB function failed: %s", body)
	}
	insts := tp.Instances()
	if len(insts) != 1 {
		t.Fatalf("instances: %+v", insts)
	}
	tp.mu.Lock()
	in := tp.instances[insts[0].ID]
	tp.mu.Unlock()
	sb := in.Sandbox
	if sb.OOMKilled() {
		t.Fatal("OOM-killed")
	}
	if peak := sb.Cgroup.PeakMemory(); peak > 128<<20 || peak <= 0 {
		t.Fatalf("peak memory %d B, limit %d B", peak, 128<<20)
	}
	unix.Sync() // every dirty page written back, through the loop device
	if res := residentBytes(t, sb.tmpImage.path); res > 8<<20 {
		t.Fatalf("the host's page cache holds %d B of the /tmp image after a %d B write: a second copy", res, size)
	}
}

// A calibrated lambda sandbox's /tmp device is throttled to the table's figures: reads never
// run faster than the limits (upper bounds only: a loaded machine can only be slower; the
// margin covers blk-throttle's one-slice allowance).
func TestTmpDeviceIsThrottledAsCalibrated(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	tp := startPlatform(t, Config{Calibration: cal})
	if !tp.Status().BlockIOLimits {
		t.Skip("no block I/O controller on this host")
	}
	lim := cal.profile(ProfileLambda).tmpIO
	tp.create("thr", map[string]any{"MemorySize": 2048, "Timeout": 300}) // the FIT cells' tier
	_, r, body := tp.invoke("thr", `{"workload":{"kind":"fileio","op":"read","direct":true,"file_size":50331648,"io_size":131072}}`)
	if !r.OK {
		t.Fatalf("read: %s", body)
	}
	bps := workloadFloat(t, r, body, "throughput_bytes_per_s")
	// 32,768 reads (~4.3 s at the limit): blk-throttle's first slice (100 ms of the limit, plus
	// what an idle group carries into it) is a few percent of that, where 8,192 reads let it
	// show as x1.26 (two CI runs)
	_, r, body = tp.invoke("thr", `{"workload":{"kind":"fileio","op":"read","direct":true,"file_size":16777216,"io_size":512}}`)
	if !r.OK {
		t.Fatalf("read: %s", body)
	}
	iops := workloadFloat(t, r, body, "ops") / workloadFloat(t, r, body, "elapsed_s")
	t.Logf("/tmp direct reads: %.0f B/s (limit %d), %.0f IOPS (limit %d)", bps, lim.ReadBps, iops, lim.ReadIOPS)
	if bps > 1.25*float64(lim.ReadBps) || iops > 1.25*float64(lim.ReadIOPS) {
		t.Fatalf("faster than the calibrated limits: %.0f B/s, %.0f IOPS", bps, iops)
	}
	// unlimited stays unshaped: the same platform's unlimited sandbox reads far faster.
	tp.create("free", map[string]any{"Tags": map[string]string{TagProfile: ProfileUnlimited}, "Timeout": 300})
	_, r, body = tp.invoke("free", `{"workload":{"kind":"fileio","op":"read","direct":true,"file_size":50331648,"io_size":131072}}`)
	if !r.OK {
		t.Fatalf("read: %s", body)
	}
	if free := workloadFloat(t, r, body, "throughput_bytes_per_s"); free < 2*float64(lim.ReadBps) {
		t.Fatalf("unlimited read at %.0f B/s, not above the lambda limit %d", free, lim.ReadBps)
	}
}

// The shared file system's throughput is one budget: 16 concurrent sandboxes writing 32 MiB
// each take at least four times as long as one alone, and together they never write
// faster than the budget (EFS's, from the calibration table).
func TestSharedFileSystemIsOneBudget(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	shared := filepath.Join(t.TempDir(), "shared")
	tp := startPlatform(t, Config{Calibration: cal, SharedDir: shared, KeepAlive: time.Minute})
	budget := tp.Status().SharedBudget
	if budget.Zero() {
		t.Skip("no block I/O controller on this host")
	}
	tp.create("efs", map[string]any{"MemorySize": 128, "Timeout": 300})
	const n, size = 16, 32 << 20
	write := func(i int) (float64, []byte) {
		_, r, body := tp.invoke("efs", fmt.Sprintf(`{"workload":{"kind":"sharedfs","mode":"private","index":%d,`+
			`"op":"write","direct":true,"file_size":%d,"io_size":1048576}}`, i, size))
		if !r.OK {
			return -1, body
		}
		return workloadFloat(t, r, body, "elapsed_s"), body
	}
	round := func(k int) []float64 {
		out := make([]float64, k)
		bodies := make([][]byte, k)
		var wg sync.WaitGroup
		for i := 0; i < k; i++ {
			wg.Add(1)
			go func(i int) { defer wg.Done(); out[i], bodies[i] = write(i) }(i)
		}
		wg.Wait()
		for i, v := range out {
			if v < 0 {
				t.Fatalf("write %d: %s", i, bodies[i])
			}
		}
		sort.Float64s(out)
		return out
	}
	round(n) // n warm instances, and every file exists
	one := round(1)[0]
	start := time.Now()
	many := round(n)
	wall := time.Since(start).Seconds()
	med := many[n/2]
	agg := float64(n*size) / many[n-1]
	t.Logf("32 MiB direct write: alone %.3f s, one of %d %.3f s (x%.1f); %d together %.0f B/s (budget %d B/s, round %.2f s)",
		one, n, med, med/one, n, agg, budget.WriteBps, wall)
	if med < 4*one {
		t.Fatalf("concurrency does not contend: alone %.3f s, median of %d %.3f s", one, n, med)
	}
	// The meter lets sharedBucketSpan of the budget through at once, so one writer alone needs
	// at least size / budget less that.
	if least := float64(size)/float64(budget.WriteBps) - sharedBucketSpan.Seconds(); agg > 1.25*float64(budget.WriteBps) || one < 0.8*least {
		t.Fatalf("writes outran the budget: %.0f B/s together, alone %.3f s (at least %.3f s), budget %d B/s",
			agg, one, least, budget.WriteBps)
	}
	// The host sees what the sandboxes wrote, through the same file system.
	if fi, err := os.Stat(filepath.Join(shared, "faascope-sharedfs.dat.3")); err != nil || fi.Size() != int64(size) {
		t.Fatalf("host view of a sandbox's file: %v %v", fi, err)
	}
	if !strings.HasPrefix(mountFSType(shared), "fuse") {
		t.Fatalf("%s is not the metered file system: %q", shared, mountFSType(shared))
	}
}

// mountSource is what is mounted at dir, per /proc/self/mountinfo ("" = nothing).
func mountSource(dir string) string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	src := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			for i, x := range f {
				if x == "-" && i+2 < len(f) {
					src = f[i+2]
				}
			}
		}
	}
	return src
}

// The shared directory stays what the host sees before and after: the metered file system
// serves the directory's content, the host sees the functions' files while the platform runs,
// and once it stops they are in the directory itself (new files there, removed ones gone), with
// nothing mounted over it any more.
func TestSharedDirectoryKeepsWhatFunctionsWrote(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	shared := filepath.Join(t.TempDir(), "shared")
	os.MkdirAll(filepath.Join(shared, "sub"), 0o1777)
	os.WriteFile(filepath.Join(shared, "sub", "before.txt"), []byte("from the host"), 0o666)
	os.WriteFile(filepath.Join(shared, "gone.txt"), []byte("removed by a function"), 0o666)
	os.Chown(filepath.Join(shared, "gone.txt"), SandboxUID, SandboxUID) // the functions' identity there
	cfg := Config{Calibration: cal, SharedDir: shared, DataDir: t.TempDir(), DefaultProfile: ProfileLambda,
		Isolation: isolation(), SpareSandboxes: -1}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Serve(ctx, ln, APIHandler(p)); close(done) }()
	stop := func() { cancel(); <-done }
	defer stop()
	tp := &testPlatform{p, "http://" + ln.Addr().String(), t}
	if p.Status().SharedBudget.Zero() {
		t.Skip("no block I/O controller on this host")
	}
	if !strings.HasPrefix(mountFSType(shared), "fuse") {
		t.Fatalf("%s is not the metered file system: %q", shared, mountFSType(shared))
	}
	if b, err := os.ReadFile(filepath.Join(shared, "sub", "before.txt")); err != nil || string(b) != "from the host" {
		t.Fatalf("the mount does not serve the directory's content: %q %v", b, err)
	}
	tp.createHostile("w", 256)
	if r := tp.ask("w", map[string]any{"op": "write", "path": SharedMount + "/new.txt"}); r["err"] != "ok" {
		t.Fatalf("write: %v", r)
	}
	if r := tp.ask("w", map[string]any{"op": "unlink", "path": SharedMount + "/gone.txt"}); r["err"] != "ok" {
		t.Fatalf("unlink: %v", r)
	}
	if _, err := os.Stat(filepath.Join(shared, "new.txt")); err != nil {
		t.Fatalf("the host does not see the function's file while the platform runs: %v", err)
	}
	stop()
	if src := mountSource(shared); src != "" {
		t.Fatalf("still mounted over %s after the stop: %s", shared, src)
	}
	for name, want := range map[string]bool{"new.txt": true, "gone.txt": false, "sub/before.txt": true, "lost+found": false} {
		if _, err := os.Stat(filepath.Join(shared, name)); (err == nil) != want {
			t.Errorf("after the stop %s exists=%v, want %v", name, err == nil, want)
		}
	}
}
