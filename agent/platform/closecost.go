package platform

import (
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A short program in GCF's sandbox pays a fixed cost that its system calls do not explain. The
// 2024 thesis's GCF read a 10,000 B file with dd in 211 µs, 20 calls; at its 1 GB cell's 2.69 µs a
// call those calls take 54 µs, which leaves ~157 µs a run (its writes: ~183 µs), where this
// machine's dd leaves ~37. Where gVisor spends it is not published (first touches of memory
// handled by its kernel are the likely part). The profile's calibration may set close_cost: the
// extra time, in µs, of every close(2), the one system call each dd run makes inside its own
// timing once per file (the input's and the output's, after the copy); the fit, on one 10 KB
// cell, takes the whole per-run gap as two closes, and the other 10 KB cells check it.
//
// A classic BPF filter cannot take that long (no loops; 32,768 instructions at most over all a
// task's filters, ~10 µs here), so close is handed to the platform: a filter returns
// SECCOMP_RET_USER_NOTIF for it, the platform receives the notification on the filter's
// listener, waits out the cost and lets the call continue (SECCOMP_USER_NOTIF_FLAG_CONTINUE, the
// kernel then runs it as it would have). The caller is blocked all along, as a call trapped into
// gVisor's kernel is; the waiting is the platform's CPU, not the sandbox's. The round trip itself
// (~15 µs here) is measured once per platform process (closeCostProbe) and taken off the wait.
const keyCloseCost = "close_cost"

// CloseCostProbeArg is the hidden first argument with which the platform re-executes itself to
// time the notification's round trip (RunCloseCostProbe).
const CloseCostProbeArg = "__close-cost-probe"

const (
	seccompSetModeFilter      = 1
	seccompFlagNewListener    = 1 << 3
	seccompRetUserNotif       = 0x7fc00000
	seccompNotifFlagContinue  = 1
	closeProbeCalls           = 2000
	closeProbeRuns            = 3
	closeNotifyPollIntervalMs = 1000
)

// seccompNotif and seccompNotifResp are the kernel's struct seccomp_notif and
// seccomp_notif_resp (include/uapi/linux/seccomp.h).
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// The listener's ioctls: SECCOMP_IOWR(0, struct seccomp_notif), SECCOMP_IOWR(1, struct
// seccomp_notif_resp), with SECCOMP_IOC_MAGIC '!'.
var (
	ioctlNotifRecv = iowr('!', 0, unsafe.Sizeof(seccompNotif{}))
	ioctlNotifSend = iowr('!', 1, unsafe.Sizeof(seccompNotifResp{}))
)

func iowr(typ, nr, size uintptr) uintptr {
	const read, write = 2, 1
	return (read|write)<<30 | size<<16 | typ<<8 | nr
}

// closeNotifyProgram sends close(2) to the listener and allows everything else (the policy,
// installed before it, still decides: the kernel takes the most restrictive result).
func closeNotifyProgram() []unix.SockFilter {
	return []unix.SockFilter{
		{Code: bpfLdW, K: seccompDataNr},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.SYS_CLOSE},
		{Code: bpfRet, K: seccompRetUserNotif},
		{Code: bpfRet, K: retAllow},
	}
}

// installCloseNotify loads the close filter on the calling thread and returns its listener (a
// close-on-exec descriptor). From here on every close of this thread and of what it execs waits
// for whoever holds the listener.
func installCloseNotify() (int, error) {
	prog := closeNotifyProgram()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, e := unix.RawSyscall(unix.SYS_SECCOMP, seccompSetModeFilter, seccompFlagNewListener, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return -1, fmt.Errorf("install close filter: %w", e)
	}
	return int(fd), nil
}

// handOverCloseNotify is the sandbox init's part: install the filter, send its listener to the
// platform over sock. Neither descriptor is closed here (a close would wait for the platform):
// both are close-on-exec, and the exec that follows closes them.
func handOverCloseNotify(sock int) error {
	lfd, err := installCloseNotify()
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(sock, []byte{1}, unix.UnixRights(lfd), nil, 0); err != nil {
		return fmt.Errorf("hand over the close listener: %w", err)
	}
	return nil
}

// receiveCloseNotify is the platform's part: take the listener from the init and serve it until
// no task uses the filter any more. It owns sock and closes it; an init that ends before sending
// (or a sandbox without the cost) closes its end and this returns.
func receiveCloseNotify(sock *os.File, cost time.Duration) {
	defer sock.Close()
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, 0)
	if err != nil || oobn == 0 {
		return
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) == 0 {
		return
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	wait := cost - closeNotifyRoundTrip()
	serveCloseNotify(fds[0], max(wait, 0))
}

// serveCloseNotify answers every notification on the listener after wait, until the filter has
// no task left (the listener then polls as hung up). It closes the listener.
func serveCloseNotify(lfd int, wait time.Duration) {
	defer unix.Close(lfd)
	for {
		pfd := []unix.PollFd{{Fd: int32(lfd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, closeNotifyPollIntervalMs); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				return
			}
			continue
		}
		var n seccompNotif
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), ioctlNotifRecv, uintptr(unsafe.Pointer(&n))); e != 0 {
			if e == unix.ENOENT || e == unix.EINTR { // the caller died or was interrupted
				continue
			}
			return
		}
		if wait > 0 {
			// A busy wait: a timer's wake-up is tens of µs late and varies with load.
			for t := time.Now(); time.Since(t) < wait; {
			}
		}
		r := seccompNotifResp{ID: n.ID, Flags: seccompNotifFlagContinue}
		unix.Syscall(unix.SYS_IOCTL, uintptr(lfd), ioctlNotifSend, uintptr(unsafe.Pointer(&r)))
	}
}

// closeCostProbeResult is what the probe child prints.
type closeCostProbeResult struct {
	PlainNs    float64 `json:"plain_ns"`    // a close's median time without the filter
	NotifiedNs float64 `json:"notified_ns"` // with the filter and an immediate answer
}

// RunCloseCostProbe is the probe child: it times closes on this thread without the filter, then
// with it, answered at once by another thread of this process, and prints the medians.
func RunCloseCostProbe(args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("usage: %s", CloseCostProbeArg)
	}
	runtime.LockOSThread() // the filter is this thread's only; the thread ends with the process
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	plain, err := timeCloses(closeProbeCalls)
	if err != nil {
		return err
	}
	lfd, err := installCloseNotify()
	if err != nil {
		return err
	}
	go serveCloseNotify(lfd, 0)
	notified, err := timeCloses(closeProbeCalls)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(closeCostProbeResult{PlainNs: plain, NotifiedNs: notified})
	_, err = fmt.Println(string(b))
	return err
}

// timeCloses is the median time of n closes of a fresh descriptor, on the wall clock (the wait
// is spent off this thread).
func timeCloses(n int) (float64, error) {
	ds := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		fd, err := unix.Dup(2)
		if err != nil {
			return 0, err
		}
		t := time.Now()
		unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
		ds = append(ds, float64(time.Since(t).Nanoseconds()))
	}
	sort.Float64s(ds)
	return ds[len(ds)/2], nil
}

var closeProbe struct {
	once  sync.Once
	round time.Duration
}

// closeNotifyRoundTrip is what a notification adds to a close on this machine when answered at
// once: the least of a few probe runs (a loaded machine only adds). 0 if the probe failed.
func closeNotifyRoundTrip() time.Duration {
	closeProbe.once.Do(func() {
		self, err := os.Executable()
		if err != nil {
			return
		}
		best := math.Inf(1)
		for i := 0; i < closeProbeRuns; i++ {
			var r closeCostProbeResult
			if err := runSelfProbe(self, &r, CloseCostProbeArg); err != nil || r.NotifiedNs <= 0 {
				log.Printf("close cost probe: %v %+v", err, r)
				return
			}
			best = math.Min(best, r.NotifiedNs-r.PlainNs)
		}
		closeProbe.round = time.Duration(math.Max(best, 0))
		log.Printf("close cost probe: a notified close takes %s more", closeProbe.round)
	})
	return closeProbe.round
}
