package platform

import (
	"context"
	"time"
)

// The modelled front end: what a cloud's request path (API front end, routing to a worker)
// adds to the latency a client sees on every invocation, warm or cold. The local platform's
// own request path is this machine's loopback (a warm noop answers in ~3 ms), while STeLLAR
// measured a warm median of 18 ms on AWS Lambda; the cold-start model (cold_start_fixed) was
// fitted with that 18 ms taken out, so without this delay neither warm latencies nor
// cold/warm ratios are the cloud's.
//
// The delay is a calibration entry per profile (front_end_delay, ms; absent or 0 = none). It
// is waited out in the API handler after the invocation has returned (a RequestResponse) or
// before the 202 (an Event): outside the function's timed workload, its Duration and its
// Billed Duration, and without holding the instance. Every invocation's reply says what was
// applied (X-Faascope-Front-End-Ms), and the platform's status lists it per profile.
const keyFrontEnd = "front_end_delay"

// frontEnd is the profile's modelled front end (0 without a calibration or an entry).
func (c *Calibration) frontEnd(profile string) time.Duration {
	if pc := c.profile(profile); pc != nil {
		return pc.frontEnd
	}
	return 0
}

// frontEndFor is the modelled front end of the function req invokes (0 when there is none, or
// no such function: its error is answered without a front end).
func (p *Platform) frontEndFor(req InvokeRequest) time.Duration {
	if p.cfg.Calibration == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	f, _, err := p.invocationTarget(req)
	if err != nil {
		return 0
	}
	return p.cfg.Calibration.frontEnd(p.profileOf(f))
}

// waitFrontEnd sleeps d, or less when the client has gone.
func waitFrontEnd(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
