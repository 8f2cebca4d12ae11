package workloads

import (
	"context"
	"testing"
)

func TestSpinIsDeterministicWork(t *testing.T) {
	run := func(n int64) SpinResult {
		t.Helper()
		s := &Spin{Kind: "spin", Iterations: n}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		r, err := s.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r.(SpinResult)
	}
	a, b, c := run(1_000_000), run(1_000_000), run(1_000_001)
	if a.Checksum != b.Checksum || a.Checksum == c.Checksum {
		t.Fatalf("checksums: same work %s/%s, more work %s", a.Checksum, b.Checksum, c.Checksum)
	}
	if a.Ops != 1_000_000 || a.Bytes != 0 || a.Kind != "spin" {
		t.Fatalf("result %+v", a)
	}
	// Pinned so that a change to the unit of work, which would silently break comparisons
	// across versions, fails here.
	if got := run(1).Checksum; got != "e220a8397b1dcdaf" {
		t.Fatalf("checksum of 1 iteration = %s", got)
	}
	big := run(50_000_000)
	if big.ElapsedS <= 0 || big.CPUS <= 0 {
		t.Fatalf("elapsed %v cpu %v", big.ElapsedS, big.CPUS)
	}
	// Unthrottled, the spinning thread gets (almost) all the wall time.
	if big.CPUS > big.ElapsedS*1.05+0.01 {
		t.Fatalf("cpu_s %v exceeds elapsed_s %v", big.CPUS, big.ElapsedS)
	}
}

func TestSpinBounds(t *testing.T) {
	for _, n := range []int64{0, -1, MaxSpinIterations + 1} {
		if err := (&Spin{Iterations: n}).Validate(); err == nil || err.(*Error).Type != InvalidRequest {
			t.Errorf("iterations=%d: %v", n, err)
		}
	}
}
