package workloads

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// requestStats is what a run of many small requests reports: per-request latency, failures.
type requestStats struct {
	latency  *histogram
	ttfb     *histogram // time to first byte (object GET only)
	samples  *sampler   // raw latencies of a systematic sample of the requests
	elapsed  time.Duration
	done     int64 // requests that succeeded
	failed   int64
	firstErr error
	sample   string // the first failure's message, for on_error "count"
}

// reqFunc does request i and returns the bytes it moved and, for reads, the time to the first
// byte (0 if not measured).
type reqFunc func(ctx context.Context, i int64) (bytes int64, ttfb time.Duration, err error)

// runRequests issues count requests with the given parallelism (each worker takes the next
// index, so requests are spread over the workers as they finish). With stopOnError the first
// failure cancels the rest; otherwise failures are counted and the run goes on. The timed
// region spans from before the first request to after the last one completes.
func runRequests(ctx context.Context, count int64, parallelism int, stopOnError bool, fn reqFunc) (requestStats, int64) {
	if parallelism < 1 {
		parallelism = 1
	}
	if int64(parallelism) > count {
		parallelism = int(count)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next, moved, done, failed atomic.Int64
	var mu sync.Mutex
	var firstErr error
	hists := make([]*histogram, parallelism)
	ttfbs := make([]*histogram, parallelism)
	samples := newSampler(count)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < parallelism; w++ {
		hists[w], ttfbs[w] = newHistogram(), newHistogram()
		wg.Add(1)
		go func(h, tf *histogram) {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= count || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				n, ttfb, err := fn(ctx, i)
				d := time.Since(t0)
				if err != nil {
					if errors.Is(err, context.Canceled) && ctx.Err() != nil {
						return // cancelled because another request failed
					}
					failed.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					if stopOnError {
						cancel()
						return
					}
					continue
				}
				done.Add(1)
				moved.Add(n)
				h.record(d)
				samples.record(i, d)
				if ttfb > 0 {
					tf.record(ttfb)
				}
			}
		}(hists[w], ttfbs[w])
	}
	wg.Wait()
	st := requestStats{elapsed: time.Since(start), done: done.Load(), failed: failed.Load(), firstErr: firstErr,
		latency: newHistogram(), ttfb: newHistogram(), samples: samples}
	for w := range hists {
		st.latency.merge(hists[w])
		st.ttfb.merge(ttfbs[w])
	}
	if firstErr != nil {
		st.sample = firstErr.Error()
	}
	return st, moved.Load()
}

func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.min = min(h.min, o.min)
	h.max = max(h.max, o.max)
}

// asErr is errors.As for interface targets.
func asErr[T any](err error, target *T) bool { return errors.As(err, target) }

// orDefault reads an optional request field: nil (omitted) gives the default, anything else
// (0 included) is the caller's to validate, so that an explicit 0 is rejected like the schema
// rejects it rather than silently meaning "default".
func orDefault[T int | int64](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
