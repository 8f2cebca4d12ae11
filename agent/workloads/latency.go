package workloads

import (
	"math"
	"math/bits"
	"time"
)

// Latency summarises per-operation latencies, in seconds.
type Latency struct {
	Count int64   `json:"count"`
	MinS  float64 `json:"min_s"`
	MeanS float64 `json:"mean_s"`
	P50S  float64 `json:"p50_s"`
	P90S  float64 `json:"p90_s"`
	P99S  float64 `json:"p99_s"`
	P999S float64 `json:"p999_s"`
	MaxS  float64 `json:"max_s"`
}

// histogram records durations in log-linear buckets (the HDR histogram idea): exact below
// 256 ns, then 128 buckets per power of two, so a percentile is off by at most 1/256 of its
// value. Recording is O(1) without allocation and memory is fixed (~60 KiB) however many
// operations run, which matters in a 128 MB sandbox doing millions of 512 B I/Os.
// Min, max and mean are exact.
type histogram struct {
	counts   [subBuckets * 58]int64
	n        int64
	sum      float64
	min, max int64
}

const (
	subBits    = 7
	subBuckets = 1 << subBits
)

func newHistogram() *histogram { return &histogram{min: math.MaxInt64} }

func bucketOf(v int64) int {
	if v < 2*subBuckets {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - subBits - 1
	return subBuckets*e + int(v>>e)
}

// bucketMid is the midpoint of the values that fall into bucket i.
func bucketMid(i int) int64 {
	if i < 2*subBuckets {
		return int64(i)
	}
	e := i/subBuckets - 1
	m := int64(i - subBuckets*e)
	return m<<e + (int64(1)<<e)/2
}

func (h *histogram) record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(v)]++
	h.n++
	h.sum += float64(v)
	if v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
}

// quantile uses the nearest-rank definition: the smallest value with at least q·n values ≤ it.
func (h *histogram) quantile(q float64) int64 {
	rank := int64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := bucketMid(i)
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

func (h *histogram) summary() *Latency {
	if h.n == 0 {
		return &Latency{}
	}
	s := func(ns int64) float64 { return float64(ns) / 1e9 }
	return &Latency{
		Count: h.n,
		MinS:  s(h.min),
		MeanS: h.sum / float64(h.n) / 1e9,
		P50S:  s(h.quantile(0.50)),
		P90S:  s(h.quantile(0.90)),
		P99S:  s(h.quantile(0.99)),
		P999S: s(h.quantile(0.999)),
		MaxS:  s(h.max),
	}
}
