package platform

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// "Max Memory Used" in the REPORT line is the larger of two peaks over the instance's life:
//   - the sandbox's memory cgroup (memory.max_usage_in_bytes, v2 memory.peak): the function's
//     anonymous memory, the page cache of the files it writes (its /tmp too) and reads first,
//     kernel memory charged to it;
//   - the peak resident set of the sandbox's processes (the sum of their VmHWM), which counts
//     every page a process mapped, wherever the kernel charged it.
//
// The second is needed because the kernel charges a cached page to the cgroup that first
// brought it in: the package's files, unpacked by the platform, and the interpreter and shared
// libraries a runtime maps from the host's /usr are cached on the host's account. A function
// mapping a 40 MB file of its package reported 1 MB while its RSS was 47 MB, and awslambdaric
// 9 MB with 15 MB resident. On Lambda those files live in the execution environment and count.
//
// The package's pages are not moved onto the sandbox's account (they once were, by dropping
// them from the page cache before the runtime started): a sandbox filling its memory with /tmp
// on tmpfs (the gcf profile) then had its own runtime's code reclaimed and read back over and
// over instead of being killed, for up to 30 s, and every cold start paid a syncfs.

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
