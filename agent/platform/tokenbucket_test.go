package platform

import (
	"fmt"
	"testing"
	"time"
)

// The bucket's arithmetic runs on a synthetic clock: t0 plus offsets, so every expectation is
// exact. One real-time test checks that Take sleeps what reserve computes.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// wantReserve asserts that reserving n tokens at now waits exactly want (0: spent).
func wantReserve(t *testing.T, b *TokenBucket, n int64, now time.Time, want time.Duration) {
	t.Helper()
	if got := b.reserve(n, now); got != want {
		t.Fatalf("reserve(%d) at t0+%s: wait %s, want %s", n, now.Sub(t0), got, want)
	}
}

func TestTokenBucketRefillsSizePerRefillTime(t *testing.T) {
	b := NewTokenBucketAt(1000, time.Second, 0, t0) // 1 token per ms
	wantReserve(t, b, 1000, at(0), 0)               // starts full
	wantReserve(t, b, 1, at(0), time.Millisecond)   // then empty
	wantReserve(t, b, 250, at(250*time.Millisecond), 0)
	wantReserve(t, b, 1, at(250*time.Millisecond), time.Millisecond)
	// 50 ms later there are 50 tokens: 100 wait 50 ms more, 50 pass.
	wantReserve(t, b, 100, at(300*time.Millisecond), 50*time.Millisecond)
	wantReserve(t, b, 50, at(300*time.Millisecond), 0)
	wantReserve(t, b, 1, at(300*time.Millisecond), time.Millisecond)
}

func TestTokenBucketCarriesFractionsOfATokenAcrossRefills(t *testing.T) {
	// 3 tokens per second: one every 333,333,333⅓ ns. The fraction must not be lost, or a
	// bucket refilled in many small steps would run slower than its rate.
	b := NewTokenBucketAt(3, time.Second, 0, t0)
	wantReserve(t, b, 3, at(0), 0)
	wantReserve(t, b, 1, at(0), 333333334)           // rounded up: the token exists then
	wantReserve(t, b, 1, at(333333333), 1)           // one nanosecond short
	wantReserve(t, b, 1, at(333333334), 0)           // and there it is
	wantReserve(t, b, 2, at(time.Second), 0)         // the carried fraction completes the next two
	wantReserve(t, b, 1, at(time.Second), 333333334) // exactly one token per third of a second again
}

func TestTokenBucketIsCappedAtSize(t *testing.T) {
	b := NewTokenBucketAt(1000, time.Second, 0, t0)
	wantReserve(t, b, 100, at(0), 0)
	// 500 ms would refill 500 tokens into a bucket missing 100: it holds 1000, not 1400.
	wantReserve(t, b, 1000, at(500*time.Millisecond), 0)
	wantReserve(t, b, 1, at(500*time.Millisecond), time.Millisecond)
	// An hour idle is still one bucket.
	wantReserve(t, b, 1000, at(time.Hour), 0)
	wantReserve(t, b, 1, at(time.Hour), time.Millisecond)
}

func TestTokenBucketSpendsTheOneTimeBurstFirstAndNeverRefillsIt(t *testing.T) {
	b := NewTokenBucketAt(1000, time.Second, 500, t0)
	wantReserve(t, b, 300, at(0), 0)  // from the burst: the bucket stays full
	wantReserve(t, b, 1000, at(0), 0) // 200 of burst, then 800 of the bucket
	wantReserve(t, b, 201, at(0), time.Millisecond)
	wantReserve(t, b, 200, at(0), 0) // the bucket's last 200
	// Ten refill times later the bucket is full again, the burst is not.
	wantReserve(t, b, 1000, at(10*time.Second), 0)
	wantReserve(t, b, 1, at(10*time.Second), time.Millisecond)
}

func TestTokenBucketReturnsTheWaitWhenEmptyAndSpendsNothing(t *testing.T) {
	b := NewTokenBucketAt(1000, time.Second, 100, t0)
	wantReserve(t, b, 1000, at(0), 0) // 100 of burst and 900 of the bucket: 100 tokens left
	wantReserve(t, b, 300, at(0), 200*time.Millisecond)
	// A refused reserve spent nothing: 100 ms later the wait is exactly 100 ms shorter.
	wantReserve(t, b, 300, at(100*time.Millisecond), 100*time.Millisecond)
	wantReserve(t, b, 300, at(200*time.Millisecond), 0)
	wantReserve(t, b, 1, at(200*time.Millisecond), time.Millisecond)
}

// fakeClock is a synthetic clock whose sleep advances it and records what was slept.
type fakeClock struct {
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(d time.Duration) {
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
}

func TestTokenBucketTakesMoreThanSizeInParts(t *testing.T) {
	// 3500 tokens from a full 1000-token bucket (1 per ms): 1000 at once, then a whole
	// refill time for each further 1000, then 500 ms for the last 500.
	c := &fakeClock{now: t0}
	b := NewTokenBucketAt(1000, time.Second, 0, t0)
	b.take(3500, c.Now, c.Sleep)
	want := []time.Duration{time.Second, time.Second, 500 * time.Millisecond}
	if fmt.Sprint(c.sleeps) != fmt.Sprint(want) {
		t.Fatalf("slept %v, want %v", c.sleeps, want)
	}
	wantReserve(t, b, 1, c.now, time.Millisecond) // and the bucket is empty at the end

	// With a one-time burst the first part comes from it and the bucket covers the second.
	c = &fakeClock{now: t0}
	b = NewTokenBucketAt(1000, time.Second, 1000, t0)
	b.take(2500, c.Now, c.Sleep)
	if want := []time.Duration{500 * time.Millisecond}; fmt.Sprint(c.sleeps) != fmt.Sprint(want) {
		t.Fatalf("with a burst slept %v, want %v", c.sleeps, want)
	}
}

func TestTokenBucketTakeSleepsInRealTime(t *testing.T) {
	// 1 MiB bucket refilling in 100 ms (10 MiB/s) with a 1 MiB one-time burst: 2 MiB go at
	// once, the next 2 MiB take 200 ms.
	b := NewTokenBucket(1<<20, 100*time.Millisecond, 1<<20)
	start := time.Now()
	b.Take(2 << 20)
	if el := time.Since(start); el > 20*time.Millisecond {
		t.Fatalf("bucket plus one-time burst should pass at once, took %s", el)
	}
	start = time.Now()
	b.Take(2 << 20)
	el := time.Since(start)
	if el < 180*time.Millisecond || el > 260*time.Millisecond {
		t.Fatalf("2 MiB at 10 MiB/s should take ~200 ms, took %s", el)
	}
	var unlimited *TokenBucket
	unlimited.Take(1 << 40) // nil is unlimited and returns at once
}

func TestParseNetShape(t *testing.T) {
	ns, err := ParseNetShape("size=1048576,refill_ms=100,out_one_time_burst=5", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ns.In.Size != 1<<20 || ns.Out.RefillTime != 100*time.Millisecond || ns.Out.OneTimeBurst != 5 || ns.In.OneTimeBurst != 0 {
		t.Fatalf("%+v", ns)
	}
	// Lambda's bucket is in the calibration table (calibration_test.go), not in the code.
	if _, err := ParseNetShape("lambda", nil); err == nil {
		t.Fatal("the lambda net shape without a calibration should be refused")
	}
	for _, bad := range []string{"size=1", "speed=3", "size=-1,refill_ms=3", "size"} {
		if _, err := ParseNetShape(bad, nil); err == nil {
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
