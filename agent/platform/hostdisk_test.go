package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Co-location (Kim & Lee): 4 lambda sandboxes writing to their own /tmp at once each get about
// a quarter of what one alone gets, and together about what one alone gets: the host disk's
// budget holds them, for direct writes and for buffered writes forced out by fsync alike.
// Before the host budget each sandbox had only its own limits and 4 wrote 4 times as much.
func TestColocatedTmpWritersShareTheHostBudget(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	tp := startPlatform(t, Config{Calibration: cal, KeepAlive: time.Minute})
	st := tp.Status()
	if !st.BlockIOLimits {
		t.Skip("no block I/O controller on this host")
	}
	if st.HostTmpBudget.Zero() {
		t.Fatalf("calibrated platform without a host /tmp budget: %+v", st)
	}
	// 2048 MB: each sandbox's own limits equal the host budget (the table), so the aggregate
	// stays flat from one writer on
	tp.create("col", map[string]any{"MemorySize": 2048, "Timeout": 300})
	const n, size = 4, 24 << 20 // ~0.75 s alone at 33 MB/s: blk-throttle's 100 ms slice stays small
	round := func(k int, direct bool) ([]float64, float64) {
		out := make([]float64, k)
		bodies := make([][]byte, k)
		var wg sync.WaitGroup
		t0 := time.Now()
		for i := 0; i < k; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, r, body := tp.invoke("col", fmt.Sprintf(`{"workload":{"kind":"fileio","op":"write","direct":%v,`+
					`"fsync":"end","file_size":%d,"io_size":1048576}}`, direct, size))
				bodies[i] = body
				out[i] = -1
				if r.OK {
					out[i] = workloadFloat(t, r, body, "elapsed_s")
				}
			}(i)
		}
		wg.Wait()
		wall := time.Since(t0).Seconds()
		for i, v := range out {
			if v <= 0 {
				t.Fatalf("write %d: %s", i, bodies[i])
			}
		}
		sort.Float64s(out)
		return out, wall
	}
	round(n, true) // n warm instances
	for _, direct := range []bool{true, false} {
		one, _ := round(1, direct)
		many, wall := round(n, direct)
		alone := float64(size) / one[0]
		per := float64(size) / many[n/2]
		agg := float64(n*size) / wall
		t.Logf("direct=%v: alone %.1f MB/s; %d at once %.1f MB/s each (median), %.1f MB/s together (budget %.1f MB/s)",
			direct, alone/1e6, n, per/1e6, agg/1e6, float64(st.HostTmpBudget.WriteBps)/1e6)
		if per > alone/2.5 {
			t.Errorf("direct=%v: per-function bandwidth does not fall: alone %.0f B/s, one of %d %.0f B/s", direct, alone, n, per)
		}
		if agg > 1.3*alone || agg < alone/1.3 {
			t.Errorf("direct=%v: aggregate of %d %.0f B/s, alone %.0f B/s: not flat within x1.3", direct, n, agg, alone)
		}
	}
}

// The host disk holds the lambda sandboxes' /tmp images while the platform runs (a loop device
// mounted in the data directory), a deleted function's images go with its sandboxes, and a
// closed platform leaves neither the mount nor the image behind.
func TestHostDiskHoldsTheTmpImagesAndGoesWithThePlatform(t *testing.T) {
	needSandboxes(t)
	cal, _ := packagedCalibration(t)
	tp := startPlatform(t, Config{Calibration: cal})
	if !tp.Status().BlockIOLimits {
		t.Skip("no block I/O controller on this host")
	}
	dir := hostDiskDir(tp.cfg.DataDir)
	if !strings.Contains(mountSource(dir), "/dev/loop") {
		t.Fatalf("%s is not a loop device's mount: %q", dir, mountSource(dir))
	}
	tp.create("img", map[string]any{"MemorySize": 256, "Timeout": 60})
	if _, r, body := tp.invoke("img", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("invoke: %s", body)
	}
	images, _ := filepath.Glob(filepath.Join(dir, "sandboxes", "*.ext4"))
	if len(images) != 1 {
		t.Fatalf("images on the host disk: %v, want the one sandbox's", images)
	}
	tp.call("DELETE", "/2015-03-31/functions/img", nil, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(images[0]); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s outlived its function", images[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Close, as a stopped platform does.
	p, err := New(Config{Calibration: cal, DataDir: t.TempDir(), DefaultProfile: ProfileLambda,
		Isolation: isolation(), SpareSandboxes: -1})
	if err != nil {
		t.Fatal(err)
	}
	d2 := hostDiskDir(p.cfg.DataDir)
	if mountSource(d2) == "" {
		t.Fatalf("no host disk at %s", d2)
	}
	p.Close()
	if src := mountSource(d2); src != "" {
		t.Fatalf("%s still mounted from %s after Close", d2, src)
	}
	if _, err := os.Stat(filepath.Join(p.cfg.DataDir, "host-disk.ext4")); !os.IsNotExist(err) {
		t.Fatalf("host disk image left behind: %v", err)
	}
}

// The packaged host budget is assumed equal to one sandbox's own /tmp limits at 2048 MB and
// above (platform-lambda's host_tmp_* notes): two copies of one figure in the table, so a test
// keeps them together (an override may set them apart on purpose).
func TestPackagedHostBudgetIsOneSandboxsLimits(t *testing.T) {
	cal, _ := packagedCalibration(t)
	lam := cal.profile(ProfileLambda)
	if lam.hostTmp != lam.tmpIO || lam.hostTmp.Zero() {
		t.Fatalf("host budget %+v, sandbox limits at 2048 MB %+v", lam.hostTmp, lam.tmpIO)
	}
	if !cal.hostTmpBudget(ProfileGCF).Zero() || !cal.hostTmpBudget(ProfileUnlimited).Zero() {
		t.Fatal("a host /tmp budget for a profile whose /tmp is no device")
	}
}
