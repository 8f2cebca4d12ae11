package platform

import (
	"errors"
	"log"
	"time"
)

// Event invocations, as Lambda runs them: the API answers 202 at once with the request id the
// invocation will carry; the event waits in a queue for capacity instead of being throttled;
// an invocation that ends in a function error (an error the function returned, a crash, a
// timeout, an init failure) is retried twice, after AWS's delays of one and then two minutes,
// with the same request id, as Lambda's "retry attempts: 2" default does. Config.AsyncRetryDelays
// scales those delays (tests shorten them); PutFunctionEventInvokeConfig (MaximumRetryAttempts)
// is not implemented.

// maxAsyncPayload is Lambda's limit for an Event invocation's payload (1 MB since 2025; it was
// 256 KB).
const maxAsyncPayload = 1 << 20

// defaultAsyncRetryDelays are Lambda's waits before the first and the second retry.
var defaultAsyncRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

func (p *Platform) invokeAsync(req InvokeRequest) {
	defer p.wg.Done()
	delays := p.cfg.AsyncRetryDelays
	if delays == nil {
		delays = defaultAsyncRetryDelays
	}
	for attempt := 0; ; {
		res, meta, err := p.Invoke(p.ctx, req)
		if errors.Is(err, errThrottled) {
			// Throttled events stay in the queue (Lambda retries them for up to six hours).
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
		case attempt >= len(delays):
			log.Printf("async invoke %s (request %s) failed after %d attempts: %s", req.Name, meta.RequestID, attempt+1, res.Payload)
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
