package workloads

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// MaxSpinIterations bounds a request to hours of work, not years.
const MaxSpinIterations = 1_000_000_000_000

// Spin burns CPU for a fixed amount of work rather than a fixed time, so that the same request
// is the same work everywhere and a CPU quota shows up as a longer elapsed_s.
//
// One iteration is one SplitMix64 step (an add, two 64-bit multiplies, three xor-shifts), each
// depending on the previous one so the CPU cannot overlap iterations and the compiler cannot
// vectorise or drop them: the final state is returned as checksum.
type Spin struct {
	Kind       string `json:"kind"`
	Iterations int64  `json:"iterations"`
}

// SpinResult adds the CPU time actually granted, so elapsed_s/cpu_s reveals throttling.
type SpinResult struct {
	Common
	CPUS float64 `json:"cpu_s"`
	// Checksum is the final state as 16 hex digits: a string because uint64 does not survive
	// JSON parsers that read numbers as doubles.
	Checksum string `json:"checksum"`
}

func (s *Spin) Validate() error {
	if s.Iterations < 1 || s.Iterations > MaxSpinIterations {
		return Invalid("workload.iterations", "must be between 1 and %d (got %d)", int64(MaxSpinIterations), s.Iterations)
	}
	return nil
}

func (s *Spin) Run(context.Context) (any, error) {
	// Thread CPU time is only meaningful if the work stays on this thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	start := time.Now()
	sum := spin(uint64(s.Iterations))
	elapsed := time.Since(start).Seconds()
	cpu := threadCPU() - cpu0
	return SpinResult{
		Common:   Common{Kind: "spin", ElapsedS: elapsed, Ops: s.Iterations},
		CPUS:     cpu,
		Checksum: fmt.Sprintf("%016x", sum),
	}, nil
}

//go:noinline
func spin(n uint64) uint64 {
	var x uint64
	for i := uint64(0); i < n; i++ {
		x += 0x9e3779b97f4a7c15
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		x = (x ^ (x >> 27)) * 0x94d049bb133111eb
		x ^= x >> 31
	}
	return x
}

func threadCPU() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t unix.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
