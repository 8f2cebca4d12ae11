package platform

import (
	"testing"
	"time"
)

func TestTokenBucketBurstThenRefillRate(t *testing.T) {
	// 1 MiB bucket refilling in 100 ms (10 MiB/s) with a 1 MiB one-time burst: 2 MiB go at
	// once, the next 2 MiB take 200 ms.
	b := NewTokenBucket(1<<20, 100*time.Millisecond, 1<<20)
	t0 := time.Now()
	b.Take(2 << 20)
	if el := time.Since(t0); el > 20*time.Millisecond {
		t.Fatalf("bucket plus one-time burst should pass at once, took %s", el)
	}
	t0 = time.Now()
	b.Take(2 << 20)
	el := time.Since(t0)
	if el < 180*time.Millisecond || el > 260*time.Millisecond {
		t.Fatalf("2 MiB at 10 MiB/s should take ~200 ms, took %s", el)
	}
}

func TestParseNetShape(t *testing.T) {
	ns, err := ParseNetShape("size=1048576,refill_ms=100,out_one_time_burst=5")
	if err != nil {
		t.Fatal(err)
	}
	if ns.In.Size != 1<<20 || ns.Out.RefillTime != 100*time.Millisecond || ns.Out.OneTimeBurst != 5 || ns.In.OneTimeBurst != 0 {
		t.Fatalf("%+v", ns)
	}
	if ns, _ := ParseNetShape("lambda"); ns.In.Size != 150<<20 || ns.Out.PeakBps == 0 {
		t.Fatalf("lambda preset: %+v", ns)
	}
	for _, bad := range []string{"size=1", "speed=3", "size=-1,refill_ms=3", "size"} {
		if _, err := ParseNetShape(bad); err == nil {
			t.Errorf("%q should be refused", bad)
		}
	}
}

func TestParsePortsWithMappings(t *testing.T) {
	got, err := ParsePorts("9000, 9002:9001")
	if err != nil || len(got) != 2 || got[0] != (PortMapping{9000, 9000}) || got[1] != (PortMapping{9002, 9001}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"9001", "9001:80", "0", "70000", "x", "9000,9000", "9002:"} {
		if _, err := ParsePorts(bad); err == nil {
			t.Errorf("%q should be refused", bad)
		}
	}
}
