package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deviceRequests is how many requests a block device has queued (reads and writes, merged
// ones included: /sys/block/<dev>/stat), the count the tracepoint sees one by one.
func deviceRequests(t *testing.T, dev string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/sys/dev/block", dev, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	var n int64
	for _, i := range []int{0, 1, 4, 5} { // reads, reads merged, writes, writes merged
		v, _ := strconv.ParseInt(f[i], 10, 64)
		n += v
	}
	return n
}

// Each request a lambda sandbox's /tmp device serves costs the sandbox device_cpu of CPU time,
// paid inside the sandbox's own cpu group (its quota) and shown in its cpuacct group: a
// Firecracker VMM thread's work in the function's cgroup. Before devicecpu.go a read of /tmp
// cost the sandbox nothing but its own system calls.
func TestTmpDeviceRequestsCostTheSandboxCPU(t *testing.T) {
	needSandboxes(t)
	cal, tables := packagedCalibration(t)
	costUs := tables[ProfileLambda].Entries[keyDeviceCPU].Value
	if costUs <= 0 {
		t.Fatalf("the lambda table sets no %s", keyDeviceCPU)
	}
	tp := startPlatform(t, Config{Calibration: cal})
	if st := tp.Status().DeviceCPU; !st.Active {
		t.Fatalf("device_cpu is not charged here: %s", st.Reason)
	}
	tp.create("dev", map[string]any{"MemorySize": 128, "Timeout": 120})
	read := `{"workload":{"kind":"fileio","op":"read","direct":true,"file_size":262144,"io_size":512}}`
	if _, r, body := tp.invoke("dev", read); !r.OK { // the cold start; the file's first write
		t.Fatalf("read: %s", body)
	}
	sb := instanceOf(t, tp.Platform, "dev").Sandbox
	sb.deviceMu.Lock()
	a := sb.device
	sb.deviceMu.Unlock()
	if a == nil {
		t.Fatal("the sandbox's /tmp device has no account")
	}
	dev := fmt.Sprintf("%d:%d", a.dev>>20, a.dev&(1<<20-1))
	settle := func() {
		for i := 0; i < 500 && a.debt.Load() > 0; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
	settle()
	cpuacct := func() int64 {
		d := sb.Cgroup.Dirs()["cpuacct"]
		if d == "" {
			return -1
		}
		v, _ := strconv.ParseInt(strings.TrimSpace(sb.Cgroup.read("cpuacct", "cpuacct.usage")), 10, 64)
		return v
	}
	reqs0, spent0, usage0 := deviceRequests(t, dev), a.Spent(), cpuacct()
	if _, r, body := tp.invoke("dev", read); !r.OK { // 512 direct reads and the file's rewrite
		t.Fatalf("read: %s", body)
	}
	settle()
	reqs := deviceRequests(t, dev) - reqs0
	spent := a.Spent() - spent0
	want := time.Duration(float64(reqs) * costUs * float64(time.Microsecond))
	t.Logf("%d requests to %s; %v of device CPU (%.0f µs each: %v)", reqs, dev, spent, costUs, want)
	if reqs < 512 {
		t.Fatalf("%d requests for 512 direct reads", reqs)
	}
	// every request paid, and nothing else (a flush has no data and is counted here only
	// where the kernel queues it as a request of its own)
	if spent < want*9/10 || spent > want*5/4 {
		t.Fatalf("device CPU %v for %d requests, want ~%v", spent, reqs, want)
	}
	if u := cpuacct(); usage0 >= 0 && time.Duration(u-usage0) < spent {
		t.Fatalf("the sandbox's CPU time grew by %v, less than the device CPU paid in it (%v)", time.Duration(u-usage0), spent)
	}
	// gone with the sandbox: the group is removed, the platform's own process lives on
	cg := sb.Cgroup.Dirs()["cpu"]
	sb.Destroy()
	if _, err := os.Stat(cg); !os.IsNotExist(err) {
		t.Fatalf("the sandbox's cpu group %s is still there: %v", cg, err)
	}
	if st := tp.Status().DeviceCPU; st.Devices != 0 {
		t.Fatalf("%d devices still registered after the sandbox went", st.Devices)
	}
	// the thread that paid lives on, out of the sandbox's groups: had it ended, a sandbox
	// process it once forked would have died with it (Pdeathsig)
	tid := a.tid.Load()
	time.Sleep(100 * time.Millisecond) // an ending thread is gone from /proc well within this
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/cgroup", tid))
	if err != nil {
		t.Fatalf("the device thread %d ended: %v", tid, err)
	}
	if strings.Contains(string(b), filepath.Base(cg)) {
		t.Fatalf("the device thread is still in the sandbox's group:\n%s", b)
	}
}
