package workloads

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestHistogramBucketsRoundTrip(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 255, 256, 257, 511, 512, 1000, 1 << 20, 123456789, 1<<62 + 12345, math.MaxInt64} {
		i := bucketOf(v)
		if i < prev {
			t.Fatalf("bucketOf not monotonic at %d", v)
		}
		prev = i
		mid := bucketMid(i)
		if diff := math.Abs(float64(mid-v)) / math.Max(1, float64(v)); diff > 1.0/256 {
			t.Errorf("v=%d bucket %d mid %d: relative error %g", v, i, mid, diff)
		}
	}
}

func TestHistogramMatchesExactQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := newHistogram()
	var xs []int64
	for i := 0; i < 100000; i++ {
		// right-skewed, like I/O latencies: 10 µs to seconds
		v := int64(math.Exp(r.NormFloat64()*1.5) * 100e3)
		xs = append(xs, v)
		h.record(time.Duration(v))
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := xs[int(math.Ceil(q*float64(len(xs))))-1]
		got := h.quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 1.0/256 {
			t.Errorf("q=%v: histogram %d exact %d (rel %g)", q, got, exact, rel)
		}
	}
	s := h.summary()
	if s.MinS != float64(xs[0])/1e9 || s.MaxS != float64(xs[len(xs)-1])/1e9 || s.Count != int64(len(xs)) {
		t.Errorf("summary %+v", s)
	}
}

func TestHistogramSingleValueIsExact(t *testing.T) {
	h := newHistogram()
	h.record(123457 * time.Nanosecond)
	s := h.summary()
	if s.P50S != 123457e-9 || s.P999S != 123457e-9 || s.MeanS != 123457e-9 {
		t.Errorf("summary %+v", s)
	}
}
