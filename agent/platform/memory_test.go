package platform

import (
	"os"
	"path/filepath"
	"testing"
)

// Max Memory Used is never less than the peak resident set of the sandbox's processes, even
// when the cgroup was charged less (pages of the host's /usr cached before the sandbox ran).
func TestPeakMemoryIsAtLeastTheResidentPeak(t *testing.T) {
	self := residentPeak([]int{os.Getpid()})
	if self <= 0 {
		t.Fatalf("VmHWM of this process: %d", self)
	}
	// This process's peak may grow between the reads: bracket it.
	got := peakMemory(1<<20, []int{os.Getpid()})
	if after := residentPeak([]int{os.Getpid()}); got < self || got > after {
		t.Fatalf("peakMemory with a 1 MiB cgroup peak = %d, want the resident peak (%d..%d)", got, self, after)
	}
	if got := peakMemory(1<<40, []int{os.Getpid()}); got != 1<<40 {
		t.Fatalf("peakMemory = %d, want the larger cgroup peak", got)
	}
	if got := residentPeak([]int{1 << 30}); got != 0 {
		t.Fatalf("a process that is gone counts %d bytes, want 0", got)
	}
}

func TestVmHWMParsesTheStatusLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	os.WriteFile(p, []byte("Name:\tpython3\nVmPeak:\t  30000 kB\nVmHWM:\t   15360 kB\nVmRSS:\t 15000 kB\n"), 0o644)
	if got := vmHWM(p); got != 15360<<10 {
		t.Fatalf("vmHWM = %d, want %d", got, 15360<<10)
	}
}
