package platform

import (
	"strconv"
	"testing"
	"time"
)

// The modelled front end is on every reply, warm and cold, outside the invocation's Duration
// and Billed Duration, and the status lists it per profile.
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
	for i, cold := range []bool{true, false, false} {
		t0 := time.Now()
		resp, r, body := tp.invoke("fe", `{"workload":{"kind":"noop"}}`)
		took := time.Since(t0)
		if !r.OK || r.Cold != cold {
			t.Fatalf("invoke %d: %s", i, body)
		}
		if got := resp.Header.Get("X-Faascope-Front-End-Ms"); got != "60.000" {
			t.Fatalf("invoke %d: X-Faascope-Front-End-Ms = %q", i, got)
		}
		dur, _ := strconv.ParseFloat(resp.Header.Get("X-Faascope-Duration-Ms"), 64)
		setup, _ := strconv.ParseFloat(resp.Header.Get("X-Faascope-Setup-Ms"), 64)
		initMs, _ := strconv.ParseFloat(resp.Header.Get("X-Faascope-Init-Ms"), 64)
		if !cold {
			setup, initMs = 0, 0
		}
		// the client waited the front end on top of everything the platform reports
		if ms := float64(took) / 1e6; ms < 60+dur+setup+initMs-0.01 {
			t.Errorf("invoke %d: client saw %.3f ms < front end 60 + duration %.3f + set-up %.3f + init %.3f",
				i, ms, dur, setup, initMs)
		}
	}
	// a profile without the entry has none
	if got := cal.frontEnd(ProfileGCF); got != 0 {
		t.Errorf("gcf front end %v without an entry", got)
	}
}
