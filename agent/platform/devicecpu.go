package platform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"github.com/faascope/faascope/agent/cgroupfile"
)

// On Lambda a function's block I/O costs the function's own CPU quota. Firecracker's jailer
// puts the microVM's threads in the function's cgroup: the VMM thread that serves each
// virtio-blk request, and the vCPU that waits for it (KVM polls a halted vCPU for a while
// before it sleeps). While a request is outstanding both spend CPU time the function's quota
// pays for. At 128 MB (7.2 % of a vCPU: 1.45 ms in each 20 ms period) twenty 512 B direct reads
// spend a period's quota: the 2024 thesis's 10,000 B direct reads at 128 MB took 19-21 ms in 109
// of 209 runs and 30-41 ms in 62, steps of the period, where at 2048 MB 179 of 198 took under
// 1 ms (docs/platform.md, "Device CPU").
//
// Locally a loop device's requests are served by kernel workers that belong to no sandbox, so
// the reads cost the sandbox nothing and whether 20 of them cross a period turns on a few
// microseconds of dd's own CPU. A profile's calibration may set device_cpu: the CPU time, in
// µs, each request to a sandbox's /tmp device costs that sandbox. A BPF program on the
// block:block_bio_queue tracepoint sees every request submitted to a registered device and
// posts its device number to a ring buffer; the platform adds the cost to that sandbox's debt,
// and the sandbox's device thread, one OS thread of the platform moved into the sandbox's v1
// cpu cgroup, spends the debt as its own CPU time. It runs beside the request, as Firecracker's
// VMM thread does: a request takes no longer while the quota lasts, and once the quota is
// spent the sandbox's own threads wait for the next period with the device thread.
//
// What it needs: BPF programs on tracepoints (root, CONFIG_BPF_EVENTS), tracefs, and the v1
// cpu hierarchy (v2 lets a single thread join another group only in threaded mode). Where one
// is missing the platform runs without it and says why in its status (DeviceCPU).
const keyDeviceCPU = "device_cpu"

// blockBioQueueDevOffset is where block:block_bio_queue's record holds its dev_t (u32, the
// kernel's major<<20|minor); the format file is read at load to confirm it.
const blockBioQueueDevOffset = 8

// DeviceCPUState is what the platform's status says of the mechanism.
type DeviceCPUState struct {
	Active  bool   `json:"active"`
	Reason  string `json:"reason,omitempty"`  // why it is not active
	Devices int    `json:"devices,omitempty"` // sandboxes' /tmp devices registered now
}

// deviceCPU is the platform process's one BPF program, its maps and the device threads.
type deviceCPU struct {
	devs     *ebpf.Map // kernel dev_t (u32) -> 1: the devices whose requests are posted
	events   *ebpf.Map // ring buffer of posted dev_t values
	prog     *ebpf.Program
	tp       link.Link
	reader   *ringbuf.Reader
	mu       sync.Mutex
	accounts map[uint32]*deviceAccount
}

var (
	deviceCPUOnce sync.Once
	deviceCPUInst *deviceCPU
	deviceCPUErr  error
)

// deviceCPUMechanism loads the program once per platform process.
func deviceCPUMechanism() (*deviceCPU, error) {
	deviceCPUOnce.Do(func() { deviceCPUInst, deviceCPUErr = loadDeviceCPU() })
	return deviceCPUInst, deviceCPUErr
}

// DeviceCPUStatus reports whether device_cpu is charged here; nothing is loaded when no profile
// wants it (New loads it at start when one does).
func DeviceCPUStatus(wanted bool) DeviceCPUState {
	if !wanted {
		return DeviceCPUState{Reason: "no profile sets device_cpu"}
	}
	d, err := deviceCPUMechanism()
	if err != nil {
		return DeviceCPUState{Reason: err.Error()}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return DeviceCPUState{Active: true, Devices: len(d.accounts)}
}

func loadDeviceCPU() (*deviceCPU, error) {
	if CgroupVersion() != 1 {
		return nil, errors.New("needs the cgroup v1 cpu hierarchy (a thread joins a sandbox's cpu group)")
	}
	if err := ensureTracefs(); err != nil {
		return nil, err
	}
	if err := checkBioQueueFormat(); err != nil {
		return nil, err
	}
	d := &deviceCPU{accounts: map[uint32]*deviceAccount{}}
	var err error
	if d.devs, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 65536}); err != nil {
		return nil, fmt.Errorf("BPF map: %w", err)
	}
	if d.events, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 1 << 20}); err != nil {
		d.close()
		return nil, fmt.Errorf("BPF ring buffer: %w", err)
	}
	if d.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.TracePoint, License: "GPL",
		Instructions: bioQueueProgram(d.devs.FD(), d.events.FD())}); err != nil {
		d.close()
		return nil, fmt.Errorf("BPF program: %w", err)
	}
	if d.tp, err = link.Tracepoint("block", "block_bio_queue", d.prog, nil); err != nil {
		d.close()
		return nil, fmt.Errorf("attach to block:block_bio_queue: %w", err)
	}
	if d.reader, err = ringbuf.NewReader(d.events); err != nil {
		d.close()
		return nil, fmt.Errorf("BPF ring buffer reader: %w", err)
	}
	go d.dispatch()
	return d, nil
}

// bioQueueProgram posts the request's device to the ring buffer when the device is registered:
//
//	u32 dev = ctx->dev;
//	if (bpf_map_lookup_elem(&devs, &dev)) bpf_ringbuf_output(&events, &dev, 4, 0);
//	return 0;
func bioQueueProgram(devs, events int) asm.Instructions {
	void := &btf.Pointer{Target: &btf.Void{}}
	fn := &btf.Func{Name: "bio_queue", Linkage: btf.GlobalFunc, Type: &btf.FuncProto{
		Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}, Params: []btf.FuncParam{{Name: "ctx", Type: void}}}}
	insns := asm.Instructions{
		btf.WithFuncMetadata(asm.LoadMem(asm.R2, asm.R1, blockBioQueueDevOffset, asm.Word), fn),
		asm.StoreMem(asm.RFP, -4, asm.R2, asm.Word),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, devs),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"),
		asm.LoadMapPtr(asm.R1, events),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.Mov.Imm(asm.R3, 4),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	return insns
}

// ensureTracefs mounts tracefs where the kernel documents it when no one has.
func ensureTracefs() error {
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		if _, err := os.Stat(filepath.Join(d, "events")); err == nil {
			return nil
		}
	}
	if err := unix.Mount("tracefs", "/sys/kernel/tracing", "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("tracefs is not mounted and cannot be: %w", err)
	}
	return nil
}

// checkBioQueueFormat confirms the tracepoint's record holds dev where the program reads it.
func checkBioQueueFormat() error {
	for _, d := range []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"} {
		b, err := os.ReadFile(filepath.Join(d, "events/block/block_bio_queue/format"))
		if err != nil {
			continue
		}
		want := "field:dev_t dev;\toffset:" + strconv.Itoa(blockBioQueueDevOffset) + ";\tsize:4;"
		if !strings.Contains(string(b), want) {
			return fmt.Errorf("block:block_bio_queue's record has no u32 dev at offset %d", blockBioQueueDevOffset)
		}
		return nil
	}
	return errors.New("no block:block_bio_queue tracepoint")
}

func (d *deviceCPU) close() {
	if d.reader != nil {
		d.reader.Close()
	}
	if d.tp != nil {
		d.tp.Close()
	}
	if d.prog != nil {
		d.prog.Close()
	}
	if d.events != nil {
		d.events.Close()
	}
	if d.devs != nil {
		d.devs.Close()
	}
}

// dispatch hands each posted request to its sandbox's account.
func (d *deviceCPU) dispatch() {
	for {
		rec, err := d.reader.Read()
		if err != nil {
			return // closed
		}
		if len(rec.RawSample) < 4 {
			continue
		}
		dev := binary.NativeEndian.Uint32(rec.RawSample) // the program's u32, as the kernel stored it
		d.mu.Lock()
		a := d.accounts[dev]
		d.mu.Unlock()
		if a != nil {
			a.owe()
		}
	}
}

// kernelDev is the kernel's internal dev_t (what the tracepoint records): major<<20 | minor.
func kernelDev(major, minor uint32) uint32 { return major<<20 | minor }

// maxDeviceDebt bounds what a sandbox can owe. On Lambda a device whose VMM thread has no
// quota left serves nothing until the next period; here the loop device goes on serving, so
// the debt is what keeps the two in step. The profile's /tmp IOPS limit keeps the rate of
// requests times device_cpu under the quota at every memory size (at 128 MB: 990 IOPS x 40 µs
// = 4 % of a vCPU against 7.2 %), so the bound only guards against a table without one.
const maxDeviceDebt = time.Second

// deviceIdle is how long a device thread waits for more requests before it ends: a sandbox
// holds an OS thread only while its /tmp device is busy.
const deviceIdle = time.Second

// deviceAccount is one sandbox's /tmp device: the debt its requests ran up and the thread
// that pays it inside the sandbox's cpu group.
type deviceAccount struct {
	dev      uint32
	groups   map[string]string // hierarchy -> the sandbox's directory in it
	cost     time.Duration     // per request
	debt     atomic.Int64      // ns owed
	spent    atomic.Int64      // ns paid
	tid      atomic.Int64      // the last thread that paid (it must outlive its turn: pay)
	wake     chan struct{}
	mu       sync.Mutex
	running  bool // a thread is paying
	closed   bool
	stopping atomic.Bool // closed, read without the lock by a spinning thread
	threads  sync.WaitGroup
}

func (a *deviceAccount) owe() {
	if a.debt.Add(int64(a.cost)) > int64(maxDeviceDebt) {
		a.debt.Store(int64(maxDeviceDebt))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	if !a.running {
		a.running = true
		a.threads.Add(1)
		go a.pay()
		return
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// registerDeviceCPU registers a sandbox's /tmp device ("major:minor"): from now on each
// request to it costs the sandbox's group costUs of CPU time. groups are the sandbox's v1
// directories by hierarchy: the device thread joins its cpu group (the quota) and its cpuacct
// group where there is one (the sandbox's CPU time then shows the device's, as a microVM's
// cgroup shows its VMM's).
func registerDeviceCPU(devNumber string, groups map[string]string, costUs float64) (*deviceAccount, error) {
	d, err := deviceCPUMechanism()
	if err != nil {
		return nil, err
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(devNumber, "%d:%d", &major, &minor); err != nil {
		return nil, fmt.Errorf("device %q: %w", devNumber, err)
	}
	if groups["cpu"] == "" {
		return nil, errors.New("the sandbox has no cpu group")
	}
	joins := map[string]string{"cpu": groups["cpu"]}
	if d := groups["cpuacct"]; d != "" && d != groups["cpu"] { // co-mounted: one directory
		joins["cpuacct"] = d
	}
	a := &deviceAccount{dev: kernelDev(major, minor), groups: joins,
		cost: time.Duration(costUs * float64(time.Microsecond)), wake: make(chan struct{}, 1)}
	d.mu.Lock()
	if d.accounts[a.dev] != nil {
		d.mu.Unlock()
		return nil, fmt.Errorf("device %s is registered already", devNumber)
	}
	d.accounts[a.dev] = a
	d.mu.Unlock()
	if err := d.devs.Put(a.dev, uint32(1)); err != nil {
		a.Close()
		return nil, fmt.Errorf("register device %s: %w", devNumber, err)
	}
	return a, nil
}

// pay is a device thread: locked to one OS thread that joins the sandbox's groups and leaves
// them again before it unlocks (a group with a thread in it cannot be removed). The thread
// must never end: a sandbox process it may have forked earlier for the platform dies with it
// (Pdeathsig follows the forking thread, not the process), so pay unlocks it back into Go's
// pool, or, where it could not leave a group, keeps it parked for good.
func (a *deviceAccount) pay() {
	defer a.threads.Done()
	runtime.LockOSThread()
	id := unix.Gettid()
	a.tid.Store(int64(id))
	tid := strconv.Itoa(id)
	home := threadGroups(tid)
	joined := []string{}
	leave := func() {
		for _, h := range joined {
			if err := os.WriteFile(filepath.Join(cgroupRoot, h, home[h], "tasks"), []byte(tid), 0); err != nil {
				log.Printf("device_cpu: a thread cannot leave a sandbox's %s group (%v): parked for good", h, err)
				select {} // never unlocked: see above
			}
		}
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0)
		runtime.UnlockOSThread()
	}
	defer leave()
	// The device's CPU comes from what the sandbox's own threads leave: on Lambda the VMM's
	// thread runs on other host cores than the vCPU it serves, here it shares this machine's
	// few with the reader it serves, and at normal priority it delayed the reader's wake-ups
	// (dd's 10 KB at 2048 MB: 1.4-1.5 ms a run against 1.0-1.1 without it; 1.2-1.35 idle).
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0); err != nil {
		log.Printf("device_cpu: SCHED_IDLE: %v", err)
	}
	for h, dir := range a.groups {
		if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(tid), 0); err != nil {
			log.Printf("device_cpu: move a device thread into %s: %v", dir, err)
			a.mu.Lock()
			a.running = false
			a.mu.Unlock()
			return
		}
		joined = append(joined, h)
	}
	idle := time.NewTimer(deviceIdle)
	defer idle.Stop()
	for {
		for {
			owed := a.debt.Swap(0)
			if owed <= 0 {
				break
			}
			a.spent.Add(int64(spinThreadCPU(time.Duration(owed), &a.stopping)))
		}
		idle.Reset(deviceIdle)
		timedOut := false
		select {
		case <-a.wake:
		case <-idle.C:
			timedOut = true
		}
		a.mu.Lock()
		if a.closed || (timedOut && a.debt.Load() == 0) {
			a.running = false
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
}

// threadGroups is a thread's v1 group per hierarchy ("cpu" -> "/faascope"), from
// /proc/self/task/<tid>/cgroup; "" (the root) where it is not listed.
func threadGroups(tid string) map[string]string {
	b, _ := os.ReadFile("/proc/self/task/" + tid + "/cgroup")
	v1, _, _ := cgroupfile.Parse(b)
	return v1
}

// spinThreadCPU runs until this thread has had d of CPU time: time it waits, throttled or
// preempted, does not count, so the group is charged d. It stops early once stop is set (the
// sandbox is going: at 128 MB's quota a second of debt would hold its removal for 14 s), and
// returns what it spent.
func spinThreadCPU(d time.Duration, stop *atomic.Bool) time.Duration {
	start := threadCPUTime()
	end := start + d
	now := start
	for i := 0; now < end; i++ {
		if i%1024 == 0 && stop.Load() {
			break
		}
		now = threadCPUTime()
	}
	return now - start
}

func threadCPUTime() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// Spent is the CPU time paid for the sandbox's requests so far.
func (a *deviceAccount) Spent() time.Duration { return time.Duration(a.spent.Load()) }

// Close unregisters the device, forgives what is owed and waits until no device thread is in
// the sandbox's group.
func (a *deviceAccount) Close() {
	if a == nil {
		return
	}
	if d, _ := deviceCPUMechanism(); d != nil {
		_ = d.devs.Delete(a.dev)
		d.mu.Lock()
		if d.accounts[a.dev] == a {
			delete(d.accounts, a.dev)
		}
		d.mu.Unlock()
	}
	a.mu.Lock()
	a.closed = true
	a.stopping.Store(true)
	a.debt.Store(0)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	a.threads.Wait()
}
