package platform

import (
	"fmt"
	"sort"
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
