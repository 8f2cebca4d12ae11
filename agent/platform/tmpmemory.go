package platform

import "math"

// A lambda sandbox's /tmp limits depend on its memory size. The thesis measured /tmp at two
// memory tiers: its 128 MB direct reads of a 10 KB file took 20.3 ms for 20 reads of 512 B
// (984 reads/s), its 2048 MB large-file reads ran at 7,538 reads/s and 33.3 MB/s (the FIT cells
// of tmp_read_iops and tmp_read_bps). Kim & Lee (FunctionBench, IEEE CLOUD 2019; SoCC 2019)
// saw Lambda's disk bandwidth grow with memory up to about 2 GB and stay flat above. So the
// table's tmp_* limits are the limits at and above tmp_limits_memory (2,048 MB), and below it
// they shrink as a power of memory:
//
//	limit(m) = limit · (min(m, M) / M)^α,  M = tmp_limits_memory, α = tmp_limits_memory_exponent
//
// with α fitted on the 128 MB tier's cell (ln(7,538 / 984) / ln(2048 / 128) = 0.734). One α for
// every limit: the thesis has no 128 MB cell bound by bandwidth, and a Firecracker drive's rate
// limiter has one bandwidth and one ops bucket that a per-size setting would scale together.
// Without the two entries the limits are flat in memory (the tables before this model).

const (
	keyTmpLimitsMemory   = "tmp_limits_memory"
	keyTmpMemoryExponent = "tmp_limits_memory_exponent"
)

// tmpMemoryScale is how the /tmp limits scale with memory.
type tmpMemoryScale struct {
	memoryMB float64 // the limits hold at and above this memory size; 0 = flat
	exponent float64
}

// factor is the share of the table's limits a sandbox of memoryMB gets.
func (s tmpMemoryScale) factor(memoryMB int) float64 {
	if s.memoryMB <= 0 || memoryMB <= 0 || float64(memoryMB) >= s.memoryMB {
		return 1
	}
	return math.Pow(float64(memoryMB)/s.memoryMB, s.exponent)
}

// forMemory is b scaled to memoryMB (each limit at least 1 where it was set: 0 is "unlimited").
func (s tmpMemoryScale) forMemory(b BlockIO, memoryMB int) BlockIO {
	f := s.factor(memoryMB)
	if f == 1 {
		return b
	}
	scale := func(n int64) int64 {
		if n <= 0 {
			return n
		}
		return max(1, int64(math.Round(float64(n)*f)))
	}
	return BlockIO{ReadBps: scale(b.ReadBps), WriteBps: scale(b.WriteBps), ReadIOPS: scale(b.ReadIOPS),
		WriteIOPS: scale(b.WriteIOPS)}
}
