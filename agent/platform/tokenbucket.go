package platform

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TokenBucket is Firecracker's rate limiter for bytes (firecracker-microvm/firecracker,
// src/vmm/src/rate_limiter): a bucket of Size tokens that refills from empty in RefillTime,
// plus OneTimeBurst tokens that are spent first and never refill. Unlike Firecracker, which
// retries a blocked device every 100 ms, a waiter here sleeps exactly until its tokens exist, so
// measured rates match the configuration.
//
// The arithmetic (refill, reserve) takes the time as an argument and is exact in integers: a
// fraction of a token is carried over, never rounded away, so a waiter that sleeps the time
// reserve returned finds its tokens there. Only Take reads the clock.
type TokenBucket struct {
	Size         int64
	RefillTime   time.Duration
	OneTimeBurst int64
	mu           sync.Mutex
	tokens       int64     // whole tokens in the bucket, 0…Size
	frac         uint64    // refill progress towards the next token, in token·ns (< RefillTime)
	burst        int64     // one-time credit left
	last         time.Time // refill is accounted up to here
}

// NewTokenBucket returns a full bucket; size 0 means unlimited (nil).
func NewTokenBucket(size int64, refill time.Duration, oneTimeBurst int64) *TokenBucket {
	return NewTokenBucketAt(size, refill, oneTimeBurst, time.Now())
}

// NewTokenBucketAt returns a bucket that is full at now; size 0 means unlimited (nil).
func NewTokenBucketAt(size int64, refill time.Duration, oneTimeBurst int64, now time.Time) *TokenBucket {
	if size <= 0 || refill <= 0 {
		return nil
	}
	return &TokenBucket{Size: size, RefillTime: refill, OneTimeBurst: oneTimeBurst,
		tokens: size, burst: max(oneTimeBurst, 0), last: now}
}

// Take blocks until n tokens are spent (n may exceed Size: it is taken in Size-sized parts).
func (b *TokenBucket) Take(n int64) {
	if b == nil {
		return
	}
	b.take(n, time.Now, time.Sleep)
}

// take is Take's loop with the clock passed in, so a test can run it on a synthetic one.
func (b *TokenBucket) take(n int64, now func() time.Time, sleep func(time.Duration)) {
	for n > 0 {
		part := min(n, b.Size)
		if wait := b.reserve(part, now()); wait > 0 {
			sleep(wait)
			continue
		}
		n -= part
	}
}

// reserve spends n ≤ Size tokens at now, the one-time burst first, and returns 0; or, when
// the bucket and the burst together hold fewer than n, spends nothing and returns how long
// after now the refill makes up the difference.
func (b *TokenBucket) reserve(n int64, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if short := n - b.burst - b.tokens; short > 0 {
		return b.timeToRefill(short)
	}
	fromBurst := min(n, b.burst)
	b.burst -= fromBurst
	b.tokens -= n - fromBurst
	return 0
}

// refill credits the tokens accrued between b.last and now: elapsed·Size/RefillTime, with the
// remainder kept in b.frac. The products can exceed 64 bits (a 1 GiB bucket refilled over
// minutes), hence the 128-bit arithmetic.
func (b *TokenBucket) refill(now time.Time) {
	elapsed := now.Sub(b.last)
	if elapsed <= 0 {
		return // the same instant, or a clock that went back: nothing accrued
	}
	b.last = now
	if elapsed >= b.RefillTime {
		b.tokens, b.frac = b.Size, 0
		return
	}
	hi, lo := bits.Mul64(uint64(elapsed), uint64(b.Size))
	lo, carry := bits.Add64(lo, b.frac, 0)
	// elapsed < RefillTime and frac < RefillTime, so the quotient is at most Size: no overflow.
	added, frac := bits.Div64(hi+carry, lo, uint64(b.RefillTime))
	if added >= uint64(b.Size-b.tokens) {
		b.tokens, b.frac = b.Size, 0 // a full bucket accrues nothing more
		return
	}
	b.tokens += int64(added)
	b.frac = frac
}

// timeToRefill is the shortest time in which the refill adds short ≤ Size more tokens: the
// least t with t·Size + frac ≥ short·RefillTime.
func (b *TokenBucket) timeToRefill(short int64) time.Duration {
	hi, lo := bits.Mul64(uint64(short), uint64(b.RefillTime))
	lo, borrow := bits.Sub64(lo, b.frac, 0)
	hi -= borrow
	lo, carry := bits.Add64(lo, uint64(b.Size-1), 0) // rounds the division up
	// The quotient is at most RefillTime+1, so it fits.
	t, _ := bits.Div64(hi+carry, lo, uint64(b.Size))
	return time.Duration(t)
}

// Shaping is one direction's limits: a token bucket and an optional peak rate (line rate).
type Shaping struct {
	Size         int64         `json:"size"`
	RefillTime   time.Duration `json:"refill_time"`
	OneTimeBurst int64         `json:"one_time_burst"`
	PeakBps      int64         `json:"peak_bytes_per_s"` // 0 = no peak limit
}

// NetShape is a sandbox's network limits, separately for traffic into and out of it.
type NetShape struct {
	In, Out Shaping
}

// ParseNetShape reads "none", "lambda", or "size=B,refill_ms=N[,one_time_burst=B][,peak=B/s]"
// (the same for both directions; prefix a key with in_ or out_ to set one direction). "lambda"
// is Lambda's measured network behaviour, from the lambda profile's calibration table (the
// Skyrise study's token bucket: net_* entries, calibration.go), the same in each direction since
// Lambda's inbound and outbound are separate buckets; without a calibration it is refused.
func ParseNetShape(s string, cal *Calibration) (NetShape, error) {
	switch s {
	case "", "none":
		return NetShape{}, nil
	case "lambda":
		sh, ok := cal.netShape(ProfileLambda)
		if !ok {
			return NetShape{}, fmt.Errorf("\"lambda\" comes from the lambda profile's calibration table (net_* entries): start the platform with --calibration")
		}
		return NetShape{In: sh, Out: sh}, nil
	}
	var ns NetShape
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return ns, fmt.Errorf("%q: want key=value", kv)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return ns, fmt.Errorf("%s: %q is not a non-negative integer", k, v)
		}
		dirs := []*Shaping{&ns.In, &ns.Out}
		if rest, ok := strings.CutPrefix(k, "in_"); ok {
			k, dirs = rest, []*Shaping{&ns.In}
		} else if rest, ok := strings.CutPrefix(k, "out_"); ok {
			k, dirs = rest, []*Shaping{&ns.Out}
		}
		for _, d := range dirs {
			switch k {
			case "size":
				d.Size = n
			case "refill_ms":
				d.RefillTime = time.Duration(n) * time.Millisecond
			case "one_time_burst":
				d.OneTimeBurst = n
			case "peak":
				d.PeakBps = n
			default:
				return ns, fmt.Errorf("unknown key %q (size, refill_ms, one_time_burst, peak; in_/out_ prefixes)", k)
			}
		}
	}
	for _, d := range []Shaping{ns.In, ns.Out} {
		if (d.Size > 0) != (d.RefillTime > 0) {
			return ns, fmt.Errorf("size and refill_ms go together")
		}
	}
	return ns, nil
}

// limiter is one direction's live buckets.
type limiter struct {
	bucket, peak *TokenBucket
}

func newLimiter(s Shaping) *limiter {
	l := &limiter{bucket: NewTokenBucket(s.Size, s.RefillTime, s.OneTimeBurst)}
	if s.PeakBps > 0 {
		// A 10 ms bucket at the peak rate: the line rate, with just enough depth for one chunk.
		l.peak = NewTokenBucket(s.PeakBps/100, 10*time.Millisecond, 0)
	}
	return l
}

func (l *limiter) take(n int64) {
	l.peak.Take(n)
	l.bucket.Take(n)
}
