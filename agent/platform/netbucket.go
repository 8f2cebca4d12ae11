package platform

import (
	"net/http"
	"strconv"
	"time"
)

// A sandbox's token buckets outlive its invocations, as a Firecracker VM's do: a warm
// invocation starts with whatever the previous ones left (Lambda's one-time burst is spent once
// per execution environment). What a transfer can burst depends on that, so each invocation
// reports, per direction, the tokens available when it began and the bucket's capacity
// (X-Faascope-Net-In-Bucket-Bytes, …-Capacity-Bytes; faascope.store classifies the state).

// BucketLevel is a bucket's tokens (one-time burst included) and capacity at an instant.
type BucketLevel struct {
	Available, Capacity int64
}

// Level is the bucket's content at now, one-time burst included; a nil bucket (no limit) has
// neither (0, 0).
func (b *TokenBucket) Level(now time.Time) BucketLevel {
	if b == nil {
		return BucketLevel{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return BucketLevel{Available: b.tokens + b.burst, Capacity: b.Size + max(b.OneTimeBurst, 0)}
}

// netBuckets is the level of the sandbox's buckets (in, out) at now; ok is false when the
// sandbox has no network of its own or neither direction is shaped by a bucket.
func (sn *sandboxNet) netBuckets(now time.Time) (in, out BucketLevel, ok bool) {
	if sn == nil {
		return in, out, false
	}
	if sn.in != nil {
		in = sn.in.bucket.Level(now)
	}
	if sn.out != nil {
		out = sn.out.bucket.Level(now)
	}
	return in, out, in.Capacity > 0 || out.Capacity > 0
}

// netBucketHeaders sets the X-Faascope-Net-{In,Out}-Bucket-{Bytes,Capacity-Bytes} headers of a
// shaped direction.
func netBucketHeaders(h http.Header, in, out BucketLevel) {
	for _, d := range []struct {
		name string
		l    BucketLevel
	}{{"In", in}, {"Out", out}} {
		if d.l.Capacity > 0 {
			h.Set("X-Faascope-Net-"+d.name+"-Bucket-Bytes", strconv.FormatInt(d.l.Available, 10))
			h.Set("X-Faascope-Net-"+d.name+"-Bucket-Capacity-Bytes", strconv.FormatInt(d.l.Capacity, 10))
		}
	}
}
