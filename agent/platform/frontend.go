package platform

import (
	"context"
	"slices"
	"time"
)

// The modelled front end: what a cloud's request path (API front end, routing to a worker)
// adds to the latency a client sees on every invocation, warm or cold. The local platform's
// own request path is this machine's loopback (a warm noop answers in ~3 ms), while STeLLAR
// measured a warm median of 18 ms on AWS Lambda; the cold-start model (cold_start_fixed) was
// fitted with that 18 ms taken out, so without this delay neither warm latencies nor
// cold/warm ratios are the cloud's.
//
// The modelled figure is a calibration entry per profile (front_end_delay, ms; absent or 0 =
// none): the cloud's whole request path, STeLLAR's warm median. This machine's own request path
// (the platform's: reading the request, admission, freezing the instance again; measured 1.5 ms
// on a quiet machine and 5-10 ms on a busy one) is part of what a client waits for too, so the
// delay added is the modelled figure less that path: the median of the profile's latest
// uncontended invocations (localPath). A warm reply then carries the modelled front end once,
// not the modelled one plus this machine's, and does so however fast the machine is at the
// time; contention (other invocations in flight) is never absorbed, so what a burst adds on
// top is this machine's and shows. The cold-start fit took the same 18 ms out of STeLLAR's
// cold median, so cold replies get the same delay.
//
// It is waited out in the API handler after the invocation has returned (a RequestResponse) or
// before the 202 (an Event): outside the function's timed workload, its Duration and its
// Billed Duration, and without holding the instance. Every invocation's reply says what was
// applied (X-Faascope-Front-End-Ms), and the platform's status lists the modelled figure per
// profile.
const keyFrontEnd = "front_end_delay"

// frontEndWindow is how many of a profile's latest uncontended invocations the local path's
// median is taken over: enough that one slow reply moves little, few enough to follow this
// machine's speed as it changes (on the VMs faascope is developed on, it does over hours).
const frontEndWindow = 31

// localPath holds the platform's own part of a profile's latest uncontended invocations: from
// the request's receipt to its result, less the function's run (Duration) and a cold start's
// set-up. Guarded by Platform.mu.
type localPath struct {
	last    [frontEndWindow]time.Duration
	n, next int
}

func (l *localPath) observe(d time.Duration) {
	l.last[l.next] = d
	l.next = (l.next + 1) % frontEndWindow
	l.n = min(l.n+1, frontEndWindow)
}

// median is 0 before any observation.
func (l *localPath) median() time.Duration {
	if l == nil || l.n == 0 {
		return 0
	}
	v := slices.Clone(l.last[:l.n])
	slices.Sort(v)
	if l.n%2 == 1 {
		return v[l.n/2]
	}
	return (v[l.n/2-1] + v[l.n/2]) / 2
}

// frontEndDelay is what a reply waits on top of a local path of median local so that the two
// together make the modelled front end (never less than nothing).
func frontEndDelay(modelled, local time.Duration) time.Duration {
	return max(0, modelled-local)
}

// frontEnd is the profile's modelled front end (0 without a calibration or an entry).
func (c *Calibration) frontEnd(profile string) time.Duration {
	if pc := c.profile(profile); pc != nil {
		return pc.frontEnd
	}
	return 0
}

// frontEndFor is the delay an Event invocation's 202 waits: the modelled front end of the
// function req invokes less the profile's local path (0 when there is none, or no such
// function: its error is answered without a front end).
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
	profile := p.profileOf(f)
	return frontEndDelay(p.cfg.Calibration.frontEnd(profile), p.localPaths[profile].median())
}

// frontEndAfter is the delay a synchronous invocation's reply waits, once it has returned:
// an uncontended invocation first adds its own local path to the profile's (received: when the
// API began reading the request; zero: not measured).
func (p *Platform) frontEndAfter(received time.Time, meta invokeMeta) time.Duration {
	if p.cfg.Calibration == nil {
		return 0
	}
	modelled := p.cfg.Calibration.frontEnd(meta.Profile)
	if modelled <= 0 {
		return 0
	}
	path := time.Since(received) - meta.Duration - meta.coldStart()
	p.mu.Lock()
	defer p.mu.Unlock()
	if meta.Alone && !received.IsZero() && path > 0 {
		if p.localPaths[meta.Profile] == nil {
			p.localPaths[meta.Profile] = &localPath{}
		}
		p.localPaths[meta.Profile].observe(path)
	}
	return frontEndDelay(modelled, p.localPaths[meta.Profile].median())
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
