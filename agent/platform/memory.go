package platform

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// "Max Memory Used" in the REPORT line is the peak of the sandbox's memory cgroup
// (memory.max_usage_in_bytes, v2 memory.peak) over the instance's life: the function's
// anonymous memory, the page cache of the files it reads, maps or writes (its /tmp too), and
// kernel memory charged to it. The kernel charges a cached page to the cgroup that first
// brought it in, so the package's files, unpacked by the platform, would be cached on the
// platform's account: a function mapping a 40 MB file of its package reported 1 MB while its
// RSS was 47 MB. Lambda's function reads its code inside its own execution environment, so
// the package's pages are its memory there; uncacheUnpacked makes them so here.

//
// Pages the host already has cached stay charged to whoever read them first, though: the
// interpreter and shared libraries a runtime maps from the host's /usr (Python, a glibc-linked
// Rust binary) were charged to no sandbox, and awslambdaric reported 9 MB of Max Memory Used
// with 15 MB resident. On Lambda those files live in the execution environment and count. So
// Max Memory Used is the larger of the cgroup's peak and the peak resident set of the
// sandbox's processes (the sum of their VmHWM, which counts every page a process mapped,
// wherever it was charged): never less than what the function's processes held at once.

// peakMemory is Max Memory Used for a sandbox with this cgroup peak and these processes.
func peakMemory(cgroupPeak int64, pids []int) int64 {
	return max(cgroupPeak, residentPeak(pids))
}

// residentPeak sums the processes' peak resident set sizes (VmHWM in /proc/PID/status).
func residentPeak(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		total += vmHWM(fmt.Sprintf("/proc/%d/status", pid))
	}
	return total
}

// vmHWM reads a status file's VmHWM line ("VmHWM:     1234 kB") in bytes; 0 if absent.
func vmHWM(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0 // the process ended meanwhile
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// uncacheUnpacked writes the unpacked package to disk and drops its pages from the page
// cache, so the function's first read of each file charges the sandbox's cgroup.
func uncacheUnpacked(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	// One syncfs instead of an fsync per file: dirty pages cannot be dropped.
	err = unix.Syncfs(int(d.Fd()))
	d.Close()
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}
