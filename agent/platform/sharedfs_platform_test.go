package platform

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// In a sandbox, every way the sharedfs workload writes a 16 MiB file on the calibrated shared
// file system pays the EFS budget inside its timed call, and so does reading it back and the
// app workload's output (Roy et al.'s S3-vs-EFS applications). On the former throttled ext4
// loop device, buffered writes with fsync ran at 177 MB/s (16 MiB) and 900 MB/s (4 MiB) against
// the 104.9 MB/s budget, and an app wrote 4 MiB in 4.4 ms: blk-throttle on cgroup v1 never
// sees buffered writeback (the kernel's flusher threads issue it from the root cgroup).
func TestSharedFSWorkloadsPayTheBudgetInSandboxes(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	tp := startPlatform(t, Config{Calibration: cal, SharedDir: t.TempDir() + "/shared", KeepAlive: time.Minute})
	budget := tp.Status().SharedBudget
	if budget.WriteBps == 0 || budget.ReadBps == 0 {
		t.Fatalf("no shared budget: %+v", budget)
	}
	if typ := mountFSType(tp.cfg.SharedDir); !strings.HasPrefix(typ, "fuse") {
		t.Fatalf("the shared directory is not the metered file system: %q", typ)
	}
	tp.create("efs", map[string]any{"MemorySize": 512, "Timeout": 120})
	const size = 16 << 20
	least := func(n int64, bps int64) float64 { return float64(n)/float64(bps) - sharedBucketSpan.Seconds() }
	run := func(what, workload string) (agentReply, []byte) {
		_, r, body := tp.invoke("efs", `{"workload":`+workload+`}`)
		if !r.OK {
			t.Fatalf("%s: %s", what, body)
		}
		return r, body
	}
	modes := []struct{ name, opts string }{
		{"buffered", `"fsync":"none"`},
		{"buffered+fsync", `"fsync":"end"`},
		{"fsync every write (O_SYNC's cost)", `"fsync":"every"`},
		{"O_DIRECT", `"direct":true`},
	}
	for _, m := range modes {
		r, body := run(m.name, fmt.Sprintf(`{"kind":"sharedfs","mode":"private","op":"write","file_size":%d,"io_size":1048576,%s}`, size, m.opts))
		took := workloadFloat(t, r, body, "elapsed_s")
		t.Logf("%s: 16 MiB in %.3f s, %.1f MB/s (budget %.1f MB/s); direct_effective %v, fs_type %v", m.name, took,
			size/took/1e6, float64(budget.WriteBps)/1e6, r.Workload["direct_effective"], r.Workload["fs_type"])
		if took < 0.97*least(size, budget.WriteBps) {
			t.Errorf("%s outran the budget: %.1f MB/s, budget %.1f MB/s", m.name, size/took/1e6, float64(budget.WriteBps)/1e6)
		}
		// and gets a fair part of it: at 1 MiB a request the server's own cost is small beside
		// the budget (measured on a 2-core host: 76-98 % of it, 47 % at a load average of 10)
		if took > 4*float64(size)/float64(budget.WriteBps) {
			t.Errorf("%s far below the budget: %.1f MB/s, budget %.1f MB/s", m.name, size/took/1e6, float64(budget.WriteBps)/1e6)
		}
	}
	// Roy et al.'s EFS write as the issue measured it (buffered, 1 MiB writes, fsync at the end)
	// on files of 1 and 4 MiB: 414 and 900 MB/s on the throttled block device.
	for _, n := range []int64{1 << 20, 4 << 20} {
		r, body := run("fsync end", fmt.Sprintf(`{"kind":"sharedfs","mode":"private","index":1,"op":"write","file_size":%d,"io_size":1048576,"fsync":"end"}`, n))
		took := workloadFloat(t, r, body, "elapsed_s")
		t.Logf("buffered+fsync, %d MiB: %.3f s, %.1f MB/s", n>>20, took, float64(n)/took/1e6)
		if took < 0.97*least(n, budget.WriteBps) {
			t.Errorf("buffered+fsync of %d MiB outran the budget: %.1f MB/s", n>>20, float64(n)/took/1e6)
		}
	}
	r, body := run("read", fmt.Sprintf(`{"kind":"sharedfs","mode":"private","op":"read","file_size":%d,"io_size":1048576,"prepare":false}`, size))
	took := workloadFloat(t, r, body, "elapsed_s")
	t.Logf("read: 16 MiB in %.3f s, %.1f MB/s (read budget %.1f MB/s)", took, size/took/1e6, float64(budget.ReadBps)/1e6)
	if took < 0.97*least(size, budget.ReadBps) {
		t.Errorf("the read outran the budget: %.1f MB/s, budget %.1f MB/s", size/took/1e6, float64(budget.ReadBps)/1e6)
	}
	// The app workload (sort: output = input), 4 MB through the shared file system.
	const input = 4_000_000
	r, body = run("app", fmt.Sprintf(`{"kind":"app","shape":"sort","storage":"sharedfs","input_size":%d}`, input))
	w, rd := workloadFloat(t, r, body, "write_s"), workloadFloat(t, r, body, "read_s")
	t.Logf("app sort via sharedfs: read %.1f ms, write %.1f ms of %d B", rd*1e3, w*1e3, input)
	if w < 0.97*least(input, budget.WriteBps) || rd < 0.97*least(input, budget.ReadBps) {
		t.Errorf("the app's shared-FS I/O outran the budget: read %.1f ms (at least %.1f), write %.1f ms (at least %.1f)",
			rd*1e3, least(input, budget.ReadBps)*1e3, w*1e3, least(input, budget.WriteBps)*1e3)
	}
}
