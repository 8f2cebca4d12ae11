package platform

import (
	"errors"
	"log"
	"net/http"
	"sync"
	"time"
)

// Event invocations, as Lambda runs them: the API answers 202 at once with the request id the
// invocation will carry; the event waits in a queue for capacity instead of being throttled;
// an invocation that ends in a function error (an error the function returned, a crash, a
// timeout, an init failure) is retried twice, after AWS's delays of one and then two minutes,
// with the same request id, as Lambda's "retry attempts: 2" default does. Config.AsyncRetryDelays
// scales those delays (tests shorten them). An event invoke config (eventinvoke.go) lowers the
// retries (MaximumRetryAttempts) and the age an event may reach (MaximumEventAgeInSeconds).

// maxAsyncPayload is Lambda's limit for an Event invocation's payload (1 MB since 2025; it was
// 256 KB).
const maxAsyncPayload = 1 << 20

// defaultAsyncRetryDelays are Lambda's waits before the first and the second retry.
var defaultAsyncRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// The queue is bounded as Lambda's is: an event waits for capacity at most
// AsyncQueueLimits.MaxAge (Lambda's MaximumEventAgeInSeconds, 6 hours by default), then is
// dropped, as Lambda drops it without a destination; and the platform holds at most MaxBytes of
// queued payloads and MaxEvents events, past which InvokeType Event is refused with
// TooManyRequestsException, "Rate Exceeded." (Lambda publishes no queue size: this bound is the
// local machine's, so that 1,000 queued 1 MB events for a function with reserved concurrency 0
// do not grow the platform by gigabytes: issue #29).
type AsyncQueueLimits struct {
	MaxAge    time.Duration // 0 = 6 h
	MaxBytes  int64         // 0 = 256 MiB
	MaxEvents int           // 0 = 100,000
}

const (
	defaultAsyncMaxAge    = 6 * time.Hour
	defaultAsyncMaxBytes  = 256 << 20
	defaultAsyncMaxEvents = 100000
)

// errAsyncQueueFull refuses an Event invocation the queue has no room for.
var errAsyncQueueFull = &apiError{Status: http.StatusTooManyRequests, Code: "TooManyRequestsException", Msg: "Rate Exceeded."}

// asyncQueue counts what the Event invocations held take.
type asyncQueue struct {
	mu     sync.Mutex
	bytes  int64
	events int
}

// orDefaults is the limits with each zero field set to its default.
func (l AsyncQueueLimits) orDefaults() AsyncQueueLimits {
	if l.MaxAge <= 0 {
		l.MaxAge = defaultAsyncMaxAge
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultAsyncMaxBytes
	}
	if l.MaxEvents <= 0 {
		l.MaxEvents = defaultAsyncMaxEvents
	}
	return l
}

// enter takes room for an event of n payload bytes, or says there is none.
func (q *asyncQueue) enter(n int, lim AsyncQueueLimits) bool {
	lim = lim.orDefaults()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.events+1 > lim.MaxEvents || q.bytes+int64(n) > lim.MaxBytes {
		return false
	}
	q.events++
	q.bytes += int64(n)
	return true
}

// leave gives the room back when the event is done (answered, failed for good, or dropped).
func (q *asyncQueue) leave(n int) {
	q.mu.Lock()
	q.events--
	q.bytes -= int64(n)
	q.mu.Unlock()
}

func (p *Platform) invokeAsync(req InvokeRequest, queued time.Time) {
	defer p.wg.Done()
	defer p.asyncQueue.leave(len(req.Payload))
	delays := p.cfg.AsyncRetryDelays
	if delays == nil {
		delays = defaultAsyncRetryDelays
	}
	// An event invoke config of the version or alias may allow fewer retries and a shorter
	// age (eventinvoke.go).
	retries, maxAge := p.asyncLimits(req, len(delays), p.cfg.AsyncQueue.orDefaults().MaxAge)
	for attempt := 0; ; {
		res, meta, err := p.Invoke(p.ctx, req)
		if errors.Is(err, errThrottled) {
			// Throttled events stay in the queue until they are too old, as on Lambda.
			if time.Since(queued) >= maxAge {
				log.Printf("async invoke %s dropped: waited %s for capacity (maximum event age %s)",
					req.Name, time.Since(queued).Round(time.Millisecond), maxAge)
				return
			}
			if !p.sleep(100 * time.Millisecond) {
				return
			}
			continue
		}
		req.RequestID = meta.RequestID // retries keep the request id
		switch {
		case err != nil:
			log.Printf("async invoke %s: %v", req.Name, err)
			return
		case res.FuncError == "":
			return
		case attempt >= retries:
			log.Printf("async invoke %s (request %s) failed after %d attempts: %s", req.Name, meta.RequestID, attempt+1, res.Payload)
			return
		case time.Since(queued)+delays[attempt] > maxAge:
			log.Printf("async invoke %s (request %s) dropped: its next retry would be older than the maximum event age %s", req.Name, meta.RequestID, maxAge)
			return
		}
		log.Printf("async invoke %s (request %s) failed, retrying in %s: %s", req.Name, meta.RequestID, delays[attempt], res.Payload)
		if !p.sleep(delays[attempt]) {
			return
		}
		attempt++
	}
}

// sleep waits d unless the platform stops first (false).
func (p *Platform) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
