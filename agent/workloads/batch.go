package workloads

import (
	"context"
	"crypto/rand"
)

// object and kv are both a batch: count requests of one op ("put" or "get") on the keys of
// invocation index, with a parallelism, the bytes written from source, failures either fatal
// or counted (on_error), and the keys optionally written first (prepare) and deleted after
// (drop), both outside the timed region. The helpers below hold what the two share.

// checkBatchOp checks op, which a batch requires.
func checkBatchOp(op *string) error {
	if *op == "" {
		return Invalid("workload.op", "required (\"put\" or \"get\")")
	}
	return oneOf("workload.op", op, "", "put", "get")
}

// checkBatch sets count and parallelism (default 1 each) and checks them, index, source and
// on_error (applying their defaults).
func checkBatch(count *int64, countIn *int64, parallelism *int, parallelismIn *int, index int64, source, onError *string) error {
	*count = orDefault(countIn, 1)
	if *count < 1 || *count > MaxObjectCount {
		return Invalid("workload.count", "must be between 1 and %d (got %d)", MaxObjectCount, *count)
	}
	*parallelism = orDefault(parallelismIn, 1)
	if err := checkParallelism(*parallelism); err != nil {
		return err
	}
	if index < 0 {
		return Invalid("workload.index", "must not be negative (got %d)", index)
	}
	if err := oneOf("workload.source", source, "zero", "zero", "urandom"); err != nil {
		return err
	}
	return oneOf("workload.on_error", onError, "fail", "fail", "count")
}

// defaultPrepareDrop fills in prepare and drop when the request leaves them out: a get
// prepares the keys it reads, and drops them if it prepared them; a put does neither.
func defaultPrepareDrop(op string, prepare, drop **bool) {
	if *prepare == nil {
		p := op == "get"
		*prepare = &p
	}
	if *drop == nil {
		d := op == "get" && **prepare
		*drop = &d
	}
}

// batchData is the value a batch writes, size bytes (nil unless alloc): zeros, or random
// bytes with source "urandom".
func batchData(size int64, alloc bool, source string) ([]byte, error) {
	var b []byte
	if alloc {
		b = make([]byte, size)
	}
	if source == "urandom" {
		if _, err := rand.Read(b); err != nil {
			return nil, &Error{Type: Internal, Message: "crypto/rand: " + err.Error()}
		}
	}
	return b, nil
}

// UntimedParallelism is the fewest requests in flight of a batch's untimed phases (prepare,
// drop). Nothing measures them, so a sequential get would otherwise spend most of its time
// there: 100 shaped S3 PUTs to prepare and 100 DELETEs to drop take 2 x 100 x ~37 ms = 7.4 s
// one at a time (a 1 KiB get invocation's timed region: ~2.3 s), 0.5 s at 16 in flight. 16 at
// S3's median write latency is ~430 requests/s, an eighth of S3's 3,500 PUT/s per prefix.
const UntimedParallelism = 16

// runUntimed does fn on every key outside the timed region (prepare, drop), with at least
// UntimedParallelism requests in flight (the timed region keeps the workload's parallelism):
// the first failure stops it and is returned, its message prefixed by what.
func runUntimed(ctx context.Context, count int64, parallelism int, what string, fn reqFunc) error {
	st, _ := runRequests(ctx, count, max(parallelism, UntimedParallelism), true, fn)
	if st.firstErr != nil {
		return prefixError(what, st.firstErr)
	}
	return nil
}

// batchRun is a batch's timed region: its stats, the bytes moved and the request counts.
type batchRun struct {
	st       requestStats
	moved    int64
	requests RequestCounts
}

// runTimed does the batch's timed requests; counts reads the client's attempt and throttle
// counters, before and after. With on_error "fail" the first failure is returned; with
// "count" failures are counted and the run goes on.
func runTimed(ctx context.Context, count int64, parallelism int, onError string, counts func() RetryCounts, fn reqFunc) (batchRun, error) {
	before := counts()
	st, moved := runRequests(ctx, count, parallelism, onError == "fail", fn)
	after := counts()
	if st.firstErr != nil && onError == "fail" {
		return batchRun{}, AsError(st.firstErr)
	}
	r := batchRun{st: st, moved: moved, requests: RequestCounts{OK: st.done, Failed: st.failed,
		Attempts: after.Attempts - before.Attempts, Throttles: after.Throttles - before.Throttles}}
	r.requests.Retries = max(r.requests.Attempts-st.done-st.failed, 0)
	return r, nil
}

// report fills in the result fields object and kv share from the timed region.
func (r *batchRun) report(c *Common, requests *RequestCounts, latency **Latency, samples **LatencySamples, errorSample **string, throughput, iops *float64) {
	c.ElapsedS = r.st.elapsed.Seconds()
	c.Bytes, c.Ops = r.moved, r.st.done
	*requests = r.requests
	*latency = r.st.latency.summary()
	*samples = r.st.samples.result()
	if r.st.sample != "" {
		*errorSample = &r.st.sample
	}
	if c.ElapsedS > 0 {
		*throughput = float64(c.Bytes) / c.ElapsedS
		*iops = float64(r.st.done) / c.ElapsedS
	}
}
