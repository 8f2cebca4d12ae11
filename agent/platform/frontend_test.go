package platform

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The modelled front end is on every reply, warm and cold, outside the invocation's Duration
// and Billed Duration, less this machine's own request path (the median of the uncontended
// invocations so far), and the status lists the modelled figure per profile.
func TestFrontEndIsOutsideTheInvocation(t *testing.T) {
	cal, err := parseCalibration([]byte(`{"profiles": {"lambda": {"table": "platform-lambda", "version": "test",
		"entries": {"front_end_delay": {"value": 60, "unit": "ms", "source": "test", "role": "assumed"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cal.Info()[ProfileLambda].FrontEndMs; got != 60 {
		t.Fatalf("status front_end_ms = %v, want 60", got)
	}
	tp := startPlatform(t, Config{Calibration: cal})
	tp.create("fe", nil)
	var paths []float64
	for i, cold := range []bool{true, false, false, false, false} {
		t0 := time.Now()
		resp, r, body := tp.invoke("fe", `{"workload":{"kind":"noop"}}`)
		took := time.Since(t0)
		if !r.OK || r.Cold != cold {
			t.Fatalf("invoke %d: %s", i, body)
		}
		fe := headerMs(t, resp, "X-Faascope-Front-End-Ms")
		dur := headerMs(t, resp, "X-Faascope-Duration-Ms")
		setup, initMs := headerMs(t, resp, "X-Faascope-Setup-Ms"), headerMs(t, resp, "X-Faascope-Init-Ms")
		if !cold {
			setup, initMs = 0, 0
		}
		// this invocation's own path through the platform: its steps, less the function's run
		// and the cold start
		steps := 0.0
		for _, kv := range strings.Split(resp.Header.Get("X-Faascope-Invoke-Steps"), ",") {
			name, v, _ := strings.Cut(kv, "=")
			ms, _ := strconv.ParseFloat(v, 64)
			if name != "cold_start" {
				steps += ms
			}
		}
		paths = append(paths, steps-dur)
		want := 60 - medianMs(paths)
		// the platform measures its path a few µs later than its last step ends
		if fe > want+0.01 || fe < want-2 || fe >= 60 {
			t.Errorf("invoke %d: front end %.3f ms, want 60 - median path %.3f = %.3f", i, fe, medianMs(paths), want)
		}
		// the client waited the front end on top of everything the platform reports
		if ms := float64(took) / 1e6; ms < fe+dur+setup+initMs-0.01 {
			t.Errorf("invoke %d: client saw %.3f ms < front end %.3f + duration %.3f + set-up %.3f + init %.3f",
				i, ms, fe, dur, setup, initMs)
		}
	}
	// invocations in flight together are not this machine's path alone: a reply of one of them
	// takes the front end as it was, so what contention adds shows on top of it
	tp.create("fe-long", nil)
	tp.invoke("fe-long", `{"workload":{"kind":"noop"}}`) // its cold start, alone
	tp.mu.Lock()
	before := tp.localPaths[ProfileLambda].median()
	tp.mu.Unlock()
	done := make(chan float64)
	go func() {
		resp, _, _ := tp.invoke("fe-long", `{"workload":{"kind":"spin","iterations":100000000}}`)
		done <- headerMs(t, resp, "X-Faascope-Front-End-Ms")
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		tp.mu.Lock()
		n := tp.inFlight
		tp.mu.Unlock()
		if n == 1 {
			break // the spin is admitted: the next invocation is in flight with it
		}
		if time.Now().After(deadline) {
			t.Fatal("the spin invocation was never admitted")
		}
	}
	resp, r, body := tp.invoke("fe", `{"workload":{"kind":"noop"}}`)
	if !r.OK {
		t.Fatal(string(body))
	}
	longFe := <-done
	want := float64(frontEndDelay(60*time.Millisecond, before)) / 1e6
	for _, fe := range []float64{headerMs(t, resp, "X-Faascope-Front-End-Ms"), longFe} {
		if math.Abs(fe-want) > 0.0011 {
			t.Errorf("a contended invocation's front end %.3f ms, want the uncontended path's %.3f", fe, want)
		}
	}
	// a profile without the entry has none
	if got := cal.frontEnd(ProfileGCF); got != 0 {
		t.Errorf("gcf front end %v without an entry", got)
	}
}

func headerMs(t *testing.T, resp *http.Response, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(resp.Header.Get(name), 64)
	if err != nil {
		t.Fatalf("%s: %q", name, resp.Header.Get(name))
	}
	return v
}

func medianMs(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// The local path's median follows the latest frontEndWindow observations, and the delay never
// goes below nothing.
func TestFrontEndLocalPathArithmetic(t *testing.T) {
	var l *localPath
	if l.median() != 0 {
		t.Fatal("no observation: median 0")
	}
	l = &localPath{}
	for _, ms := range []int{5, 1, 3} {
		l.observe(time.Duration(ms) * time.Millisecond)
	}
	if l.median() != 3*time.Millisecond {
		t.Fatalf("median of 5, 1, 3 ms = %v", l.median())
	}
	l.observe(7 * time.Millisecond)
	if l.median() != 4*time.Millisecond {
		t.Fatalf("median of 5, 1, 3, 7 ms = %v", l.median())
	}
	// a window later only the new values count
	for i := 0; i < frontEndWindow; i++ {
		l.observe(20 * time.Millisecond)
	}
	if l.median() != 20*time.Millisecond || l.n != frontEndWindow {
		t.Fatalf("after a full window of 20 ms: median %v over %d", l.median(), l.n)
	}
	if d := frontEndDelay(18*time.Millisecond, l.median()); d != 0 {
		t.Fatalf("a local path longer than the modelled front end leaves %v, want 0", d)
	}
	if d := frontEndDelay(18*time.Millisecond, 3*time.Millisecond); d != 15*time.Millisecond {
		t.Fatalf("18 - 3 ms = %v", d)
	}
}
