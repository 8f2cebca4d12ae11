package platform

import (
	"net/http"
	"testing"
	"time"
)

// A bucket's level is what a warm invocation starts with: full with its one-time burst when
// fresh, what the refill has restored since the last transfer after that, never the burst again.
func TestBucketLevelIsWhatTheNextTransferCanSpend(t *testing.T) {
	b := NewTokenBucketAt(1000, time.Second, 500, t0) // 1 token per ms, 500 one-off
	if got := b.Level(at(0)); got != (BucketLevel{Available: 1500, Capacity: 1500}) {
		t.Fatalf("fresh: %+v", got)
	}
	wantReserve(t, b, 1000, at(0), 0) // the burst first, then 500 of the bucket
	wantReserve(t, b, 500, at(0), 0)
	if got := b.Level(at(0)); got != (BucketLevel{Available: 0, Capacity: 1500}) {
		t.Fatalf("drained: %+v", got)
	}
	if got := b.Level(at(200 * time.Millisecond)); got.Available != 200 {
		t.Fatalf("200 ms later: %+v, want 200 available", got)
	}
	// refilled for longer than the refill time: the bucket is full, the one-off burst is gone
	if got := b.Level(at(5 * time.Second)); got.Available != 1000 {
		t.Fatalf("refilled: %+v, want 1000 available", got)
	}
	if got := (*TokenBucket)(nil).Level(at(0)); got != (BucketLevel{}) {
		t.Fatalf("no bucket: %+v", got)
	}
}

func TestNetBucketHeadersOnlyForShapedDirections(t *testing.T) {
	h := http.Header{}
	netBucketHeaders(h, BucketLevel{Available: 7, Capacity: 9}, BucketLevel{})
	if h.Get("X-Faascope-Net-In-Bucket-Bytes") != "7" || h.Get("X-Faascope-Net-In-Bucket-Capacity-Bytes") != "9" {
		t.Fatalf("in: %v", h)
	}
	if h.Get("X-Faascope-Net-Out-Bucket-Bytes") != "" {
		t.Fatalf("out is unshaped, yet: %v", h)
	}
	var sn *sandboxNet
	if _, _, ok := sn.netBuckets(at(0)); ok {
		t.Fatal("a sandbox on the host's network has no bucket")
	}
}
