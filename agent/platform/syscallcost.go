package platform

import (
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Google Cloud Functions runs a function under gVisor, whose kernel intercepts every system
// call: each costs more there than on Lambda (Firecracker, a guest kernel of its own) or on
// this machine. The 2024 thesis's GCF took 2.69 µs a dd call reading 512 B from its in-memory
// /tmp (one read, one write to /dev/null) where the gcf profile took ~1.4 µs. A profile's
// calibration may therefore set syscall_cost: the extra time, in µs, of every system call.
//
// It is applied as a seccomp filter that does nothing but take time: the kernel runs a task's
// filters on each of its system calls, in the task's own context, so their run time is real
// time spent inside the sandbox and charged to its CPU quota, as gVisor's interception is on
// GCF. The filter loads an argument first (the kernel's action cache skips filters whose result
// does not depend on the call's data) and then counts to N; it only ever allows, and the kernel
// takes the most restrictive result of all filters, so the sandbox's policy (seccomp.go) still
// decides. How many instructions make the cost depends on this CPU: a probe measures it once
// per platform process (syscallProbe), in a child with the sandbox's own policy installed.
const keySyscallCost = "syscall_cost"

// SyscallProbeArg is the hidden first argument with which the platform re-executes itself to
// time system calls under a padding filter of N instructions (RunSyscallProbe).
const SyscallProbeArg = "__syscall-cost-probe"

const (
	maxFilterInsns  = 4096   // BPF_MAXINSNS: one classic BPF program's limit
	maxPadInsns     = 30_000 // the kernel caps all of a task's filters at 32,768 (each + 4); the policy needs ~150
	probeSyscalls   = 30_000 // ~0.25 s for the whole probe at platform start (3 sizes x 3 runs)
	probeRuns       = 3      // the minimum of these resists a loaded machine
	padProbeSmall   = 1024
	padProbeLarge   = 4000
	padLoadArgInsns = 2 // each padding filter's load of args[0] and its return
)

// padProgram is one padding filter of n instructions (2 ≤ n ≤ maxFilterInsns): load args[0],
// add 1 to it n-2 times, allow.
func padProgram(n int) []unix.SockFilter {
	p := make([]unix.SockFilter, 0, n)
	p = append(p, unix.SockFilter{Code: bpfLdW, K: seccompDataArg0})
	for len(p) < n-1 {
		p = append(p, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_ADD | unix.BPF_K, K: 1})
	}
	return append(p, unix.SockFilter{Code: bpfRet, K: retAllow})
}

// padFilterSizes splits n padding instructions into filters of at most maxFilterInsns each.
func padFilterSizes(n int) []int {
	var out []int
	for n > 0 {
		k := min(n, maxFilterInsns)
		if k < padLoadArgInsns {
			k = padLoadArgInsns
		}
		out = append(out, k)
		n -= k
	}
	return out
}

// installSyscallPad loads n instructions of padding filters on the calling thread, after the
// policy (installSeccomp): no_new_privs must be set.
func installSyscallPad(n int) error {
	for _, k := range padFilterSizes(n) {
		prog := padProgram(k)
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
			return fmt.Errorf("install the system-call cost filter (%d instructions): %w", k, err)
		}
		runtime.KeepAlive(prog)
	}
	return nil
}

// probeResult is what one probe child prints.
type probeResult struct {
	NsPerSyscall float64 `json:"ns_per_syscall"`
	// PolicyRefuses: unshare(0), which the policy refuses, still failed with EPERM under the padding.
	PolicyRefuses bool `json:"policy_refuses"`
}

// RunSyscallProbe is the probe child: args are the padding's instruction count and the number
// of system calls to time. It installs the sandbox's policy and the padding on this thread,
// times getppid, checks the policy still refuses unshare, and prints a probeResult.
func RunSyscallProbe(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: %s INSNS CALLS", SyscallProbeArg)
	}
	n, err1 := strconv.Atoi(args[0])
	k, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || n < 0 || k <= 0 {
		return fmt.Errorf("%s %q: want two counts", SyscallProbeArg, args)
	}
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := installSeccomp(); err != nil {
		return err
	}
	if err := installSyscallPad(n); err != nil {
		return err
	}
	// The thread's own CPU time, not the wall clock: on a loaded machine a wall-clock probe
	// counts the time the thread waited for a CPU (measured: 741 instructions chosen for 0.55 µs
	// at load 10 against 1,630 on a quiet machine), while the filter's run time is charged to
	// the thread itself. (Two clock_gettime calls pass the filters too: nothing against k.)
	var t0, t1 unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0); err != nil {
		return fmt.Errorf("thread CPU clock: %w", err)
	}
	for i := 0; i < k; i++ {
		unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
	}
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1); err != nil {
		return fmt.Errorf("thread CPU clock: %w", err)
	}
	el := t1.Nano() - t0.Nano()
	_, _, e := unix.RawSyscall(unix.SYS_UNSHARE, 0, 0, 0)
	b, _ := json.Marshal(probeResult{NsPerSyscall: float64(el) / float64(k), PolicyRefuses: e == unix.EPERM})
	_, err := fmt.Println(string(b))
	return err
}

// probePoint is one measured padding: N instructions, ns per system call.
type probePoint struct {
	Insns int     `json:"insns"`
	Ns    float64 `json:"ns_per_syscall"`
}

// padInsnsFor chooses the padding for an extra cost of costNs per system call from the probe's
// points (sorted by Insns, the first at 0 instructions): linear between the two points around
// the target time, the last segment's slope beyond the last point. The measured times are made
// non-decreasing first (noise on a loaded machine). capped: the target needed more than
// maxPadInsns.
func padInsnsFor(points []probePoint, costNs float64) (n int, capped bool, err error) {
	if costNs <= 0 {
		return 0, false, nil
	}
	p := append([]probePoint(nil), points...)
	sort.Slice(p, func(i, j int) bool { return p[i].Insns < p[j].Insns })
	if len(p) < 2 || p[0].Insns != 0 {
		return 0, false, fmt.Errorf("system-call cost probe: need the 0-instruction point and one more, have %v", points)
	}
	for i := 1; i < len(p); i++ {
		p[i].Ns = math.Max(p[i].Ns, p[i-1].Ns)
	}
	target := p[0].Ns + costNs
	i := 1
	for i < len(p)-1 && p[i].Ns < target {
		i++
	}
	a, b := p[i-1], p[i]
	if b.Ns <= a.Ns { // a flat last segment: use the whole range's slope
		a = p[0]
	}
	if b.Ns <= a.Ns {
		return 0, false, fmt.Errorf("system-call cost probe: padding took no measurable time (%v)", points)
	}
	x := float64(a.Insns) + (target-a.Ns)*float64(b.Insns-a.Insns)/(b.Ns-a.Ns)
	n = int(math.Round(x))
	if n > maxPadInsns {
		return maxPadInsns, true, nil
	}
	return max(n, padLoadArgInsns), false, nil
}

// SyscallProbe is the probe's outcome, reported in the platform's status.
type SyscallProbe struct {
	Points    []probePoint `json:"points"`
	NsPerInsn float64      `json:"ns_per_insn"` // the slope between the first and the last point
	Err       string       `json:"error,omitempty"`
}

var syscallProbe struct {
	once   sync.Once
	result SyscallProbe
	err    error
	done   bool
	mu     sync.Mutex
}

// probeSyscallCost measures this machine once per process; later calls return the same result.
func probeSyscallCost() (SyscallProbe, error) {
	syscallProbe.once.Do(func() {
		r, err := runSyscallProbes()
		if err != nil {
			r.Err = err.Error()
			log.Printf("system-call cost probe: %v", err)
		} else {
			log.Printf("system-call cost probe: %v, %.3f ns an instruction", r.Points, r.NsPerInsn)
		}
		syscallProbe.mu.Lock()
		syscallProbe.result, syscallProbe.err, syscallProbe.done = r, err, true
		syscallProbe.mu.Unlock()
	})
	return syscallProbe.result, syscallProbe.err
}

// syscallProbeDone is the probe's result if it has run, for the status (which never starts it).
func syscallProbeDone() *SyscallProbe {
	syscallProbe.mu.Lock()
	defer syscallProbe.mu.Unlock()
	if !syscallProbe.done {
		return nil
	}
	r := syscallProbe.result
	return &r
}

func runSyscallProbes() (SyscallProbe, error) {
	var r SyscallProbe
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	for _, n := range []int{0, padProbeSmall, padProbeLarge} {
		best := math.Inf(1)
		for i := 0; i < probeRuns; i++ {
			res, err := runProbeChild(self, n, probeSyscalls)
			if err != nil {
				return r, err
			}
			best = math.Min(best, res.NsPerSyscall)
		}
		r.Points = append(r.Points, probePoint{Insns: n, Ns: best})
	}
	first, last := r.Points[0], r.Points[len(r.Points)-1]
	r.NsPerInsn = (last.Ns - first.Ns) / float64(last.Insns)
	return r, nil
}

func runProbeChild(self string, insns, calls int) (probeResult, error) {
	var res probeResult
	if err := runSelfProbe(self, &res, SyscallProbeArg, strconv.Itoa(insns), strconv.Itoa(calls)); err != nil {
		return res, fmt.Errorf("probe child (%d instructions): %w", insns, err)
	}
	if res.NsPerSyscall <= 0 {
		return res, fmt.Errorf("probe child (%d instructions): no time measured", insns)
	}
	return res, nil
}

// runSelfProbe re-executes the platform (self) with a probe's hidden arguments and an empty
// environment, and decodes the one JSON line it prints into out.
func runSelfProbe(self string, out any, args ...string) error {
	cmd := exec.Command(self, args...)
	cmd.Env = []string{}
	b, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("output %q: %w", b, err)
	}
	return nil
}

// RunProbe runs the probe child that args (the process's os.Args) name, if any: the platform's
// main and its tests route their own re-execution here. handled is false for any other command.
func RunProbe(args []string) (handled bool, err error) {
	if len(args) < 2 {
		return false, nil
	}
	name, run := "", func([]string) error { return nil }
	switch args[1] {
	case SyscallProbeArg:
		name, run = "system-call cost probe", RunSyscallProbe
	case CloseCostProbeArg:
		name, run = "close cost probe", RunCloseCostProbe
	default:
		return false, nil
	}
	if err := run(args[2:]); err != nil {
		return true, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

var cappedLog sync.Once

// syscallPadInsns is the padding a sandbox with this limit gets (0 for none), probing first if
// need be.
func syscallPadInsns(costUs float64) (int, error) {
	if costUs <= 0 {
		return 0, nil
	}
	r, err := probeSyscallCost()
	if err != nil {
		return 0, fmt.Errorf("syscall_cost: %w", err)
	}
	n, capped, err := padInsnsFor(r.Points, costUs*1000)
	if capped {
		cappedLog.Do(func() {
			log.Printf("syscall_cost %.3g µs needs more than %d filter instructions on this machine: capped", costUs, maxPadInsns)
		})
	}
	return n, err
}
