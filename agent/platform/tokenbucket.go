package platform

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TokenBucket is Firecracker's rate limiter for bytes: a bucket of Size tokens that refills
// from empty in RefillTime, plus OneTimeBurst tokens that are spent first and never refill.
// Unlike Firecracker, which retries a blocked device every 100 ms, a waiter here sleeps exactly
// until its tokens exist, so measured rates match the configuration.
type TokenBucket struct {
	Size         int64
	RefillTime   time.Duration
	OneTimeBurst int64
	mu           sync.Mutex
	tokens       float64
	burst        int64
	last         time.Time
}

// NewTokenBucket returns a full bucket; size 0 means unlimited (nil).
func NewTokenBucket(size int64, refill time.Duration, oneTimeBurst int64) *TokenBucket {
	if size <= 0 || refill <= 0 {
		return nil
	}
	return &TokenBucket{Size: size, RefillTime: refill, OneTimeBurst: oneTimeBurst,
		tokens: float64(size), burst: oneTimeBurst, last: time.Now()}
}

// Take blocks until n tokens are spent (n may exceed Size: it is taken in Size-sized parts).
func (b *TokenBucket) Take(n int64) {
	if b == nil {
		return
	}
	for n > 0 {
		part := n
		if part > b.Size {
			part = b.Size
		}
		if wait := b.reserve(part); wait > 0 {
			time.Sleep(wait)
			continue
		}
		n -= part
	}
}

// reserve spends n tokens if available and returns 0, else how long until they will be.
func (b *TokenBucket) reserve(n int64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	rate := float64(b.Size) / b.RefillTime.Seconds() // tokens per second
	b.tokens += now.Sub(b.last).Seconds() * rate
	if b.tokens > float64(b.Size) {
		b.tokens = float64(b.Size)
	}
	b.last = now
	if b.burst > 0 { // the one-time credit goes first
		use := n
		if use > b.burst {
			use = b.burst
		}
		b.burst -= use
		n -= use
		if n == 0 {
			return 0
		}
	}
	if b.tokens >= float64(n) {
		b.tokens -= float64(n)
		return 0
	}
	return time.Duration((float64(n) - b.tokens) / rate * float64(time.Second))
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

// lambdaNet is Lambda's measured network behaviour (BRIEF.md §5, Skyrise): ~1.2 GiB/s bursts,
// a ~300 MiB budget of which ~150 MiB is one-off and ~150 MiB refills, then 75 MiB/s.
var lambdaNet = Shaping{Size: 150 << 20, RefillTime: 2 * time.Second, OneTimeBurst: 150 << 20,
	PeakBps: 1288490188} // 1.2 GiB/s

// ParseNetShape reads "none", "lambda", or "size=B,refill_ms=N[,one_time_burst=B][,peak=B/s]"
// (the same for both directions; prefix a key with in_ or out_ to set one direction).
func ParseNetShape(s string) (NetShape, error) {
	switch s {
	case "", "none":
		return NetShape{}, nil
	case "lambda":
		return NetShape{In: lambdaNet, Out: lambdaNet}, nil
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
