package workloads

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// inFlight runs count requests of 10 ms through run and returns the most that were in flight
// at once.
func inFlight(count int64, run func(reqFunc)) int64 {
	var now, most atomic.Int64
	run(func(ctx context.Context, i int64) (int64, time.Duration, error) {
		n := now.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(10 * time.Millisecond)
		now.Add(-1)
		return 0, 0, nil
	})
	return most.Load()
}

// A sequential batch's prepare and drop run UntimedParallelism requests at once (nothing
// measures them); its timed region stays sequential.
func TestUntimedPhasesRunInParallelTheTimedRegionKeepsItsParallelism(t *testing.T) {
	const count = 64
	untimed := inFlight(count, func(fn reqFunc) {
		if err := runUntimed(context.Background(), count, 1, "prepare: ", fn); err != nil {
			t.Fatal(err)
		}
	})
	if untimed != UntimedParallelism {
		t.Fatalf("untimed phase: %d in flight at most, want %d", untimed, UntimedParallelism)
	}
	timed := inFlight(count, func(fn reqFunc) {
		if _, err := runTimed(context.Background(), count, 1, "fail", func() RetryCounts { return RetryCounts{} }, fn); err != nil {
			t.Fatal(err)
		}
	})
	if timed != 1 {
		t.Fatalf("timed region of parallelism 1: %d in flight at most", timed)
	}
	// a larger parallelism is kept
	if got := inFlight(count, func(fn reqFunc) { _ = runUntimed(context.Background(), count, 32, "drop: ", fn) }); got != 32 {
		t.Fatalf("untimed phase at parallelism 32: %d in flight at most", got)
	}
}

// The first failure of an untimed phase still stops it and names the phase.
func TestUntimedPhaseFailureNamesThePhase(t *testing.T) {
	err := runUntimed(context.Background(), 100, 1, "prepare: ", func(ctx context.Context, i int64) (int64, time.Duration, error) {
		return 0, 0, &Error{Type: IOError, Message: "put x: denied"}
	})
	if err == nil || AsError(err).Message != "prepare: put x: denied" {
		t.Fatalf("got %v", err)
	}
}
