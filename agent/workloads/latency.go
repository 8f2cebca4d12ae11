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

// MaxLatencySamples bounds the raw per-request latencies an object or kv result keeps beside
// its percentiles (LatencySamples), so a whole distribution can be compared with published raw
// data (a two-sample Kolmogorov-Smirnov distance) while a result stays ~10-20 KB however many
// requests ran. Why 1000: the published subsets it is compared with have 300 values, and the
// two-sample KS test's 5 % critical distance, 1.358·sqrt((n+m)/(n·m)), is 0.079 with m = 300
// and infinitely many local values, 0.089 with n = 1000 (within 14 %), 0.111 with n = 300 and
// 0.157 with n = 100: beyond ~1000 local values the published side limits what D can resolve
// (tests/fidelity/test_fidelity_raw_samples.py checks these figures). The one source of this
// bound is agent-response.schema.json's $defs.latencySamples.values_s.maxItems; a Go test
// (TestLatencySamplesBoundIsTheSchemas) fails when the two differ.
const MaxLatencySamples = 1000

// LatencySamples are raw per-request latencies of the timed region, in seconds: a systematic
// sample by request index (request i is kept when i % Stride == 0, Stride = ceil(count /
// MaxLatencySamples)), so the kept requests are spread evenly over the whole run (first
// requests and last alike) rather than being its first N, and choosing them needs no lock and
// no random numbers. Only requests that succeeded are kept, as in the percentiles; values are
// in request-index order.
type LatencySamples struct {
	Method  string    `json:"method"`
	Stride  int64     `json:"stride"`
	ValuesS []float64 `json:"values_s"`
}

// sampleStride is the stride that keeps at most MaxLatencySamples of count requests.
func sampleStride(count int64) int64 {
	if count <= MaxLatencySamples {
		return 1
	}
	return (count + MaxLatencySamples - 1) / MaxLatencySamples
}

// sampler keeps the latencies of requests 0, stride, 2·stride …; each slot is written by the
// one worker that ran that request, so no lock is needed (read after the workers are done).
type sampler struct {
	stride int64
	slots  []int64 // ns; -1: not kept (failed or not run)
}

func newSampler(count int64) *sampler {
	st := sampleStride(count)
	s := &sampler{stride: st, slots: make([]int64, (count+st-1)/st)}
	for i := range s.slots {
		s.slots[i] = -1
	}
	return s
}

func (s *sampler) record(i int64, d time.Duration) {
	if i%s.stride == 0 && i/s.stride < int64(len(s.slots)) {
		s.slots[i/s.stride] = max(int64(d), 0)
	}
}

func (s *sampler) result() *LatencySamples {
	out := &LatencySamples{Method: "systematic", Stride: s.stride, ValuesS: []float64{}}
	for _, ns := range s.slots {
		if ns >= 0 {
			out.ValuesS = append(out.ValuesS, float64(ns)/1e9)
		}
	}
	return out
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
