package platform

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A uid's lock (identity.go) says that a live platform holds it; it does not say that nothing of
// it runs. A platform killed outright frees its locks with its process, and a sandbox process
// that outlived it (one that escaped the parent-death signal, or a frozen one before the next
// platform killed it) would share its uid, and with it the kernel's per-user state (keyring,
// inotify and process limits), with the next sandbox given that uid: issue #29 saw uid 1055
// handed to another function's sandbox while the dead platform's still ran. So a uid is handed
// out only when no process runs as it.

// uidsRunning returns the uids in [lo, hi) that some process runs as, from one stat of each
// /proc/<pid>: the kernel gives a process's directory its effective uid, even when the process
// is non-dumpable (task_dump_owner keeps the effective uid for the world-readable 0555
// directories; only the files inside show root), so no status file is read. A process whose
// effective uid is root is privileged, which no sandbox's process can become (no capabilities,
// no_new_privs, nosuid mounts), so its real and saved uids are not looked at.
//
// Cost: one readdir of /proc and one stat per process, ~6 µs a process on this project's
// 2-core test machine under load (BenchmarkUIDsRunning2000: 12-15 ms at 2,200 processes;
// reading every root process's status file as well took 56-94 ms). A burst's concurrent
// allocations share one scan (sandboxUIDsRunning).
func uidsRunning(lo, hi int) map[int]bool {
	busy := map[int]bool{}
	d, err := os.Open("/proc")
	if err != nil {
		return busy
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(512)
		for _, name := range names {
			if name[0] < '0' || name[0] > '9' {
				continue
			}
			var st unix.Stat_t
			if unix.Stat("/proc/"+name, &st) != nil {
				continue // gone since the listing
			}
			if uid := int(st.Uid); uid >= lo && uid < hi {
				busy[uid] = true
			}
		}
		if err != nil || len(names) == 0 {
			return busy
		}
	}
}

// uidScan is the scan under way, which callers arriving meanwhile share: a uid gains a process
// only from a platform that holds its lock first, so a scan begun a moment before a call
// answers for it as well as one of its own.
var uidScan struct {
	sync.Mutex
	running *uidScanCall
}

type uidScanCall struct {
	done chan struct{}
	busy map[int]bool // read only once done
}

// sandboxUIDsRunning is uidsRunning over the sandbox range, shared with a scan under way.
func sandboxUIDsRunning() map[int]bool {
	uidScan.Lock()
	if c := uidScan.running; c != nil {
		uidScan.Unlock()
		<-c.done
		return c.busy
	}
	c := &uidScanCall{done: make(chan struct{})}
	uidScan.running = c
	uidScan.Unlock()
	c.busy = uidsRunning(sandboxUIDBase, sandboxUIDBase+sandboxUIDCount)
	uidScan.Lock()
	uidScan.running = nil
	uidScan.Unlock()
	close(c.done)
	return c.busy
}
