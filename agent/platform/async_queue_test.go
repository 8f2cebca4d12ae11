package platform

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue #29: 1,000 x 1 MB Event invocations to a function with reserved concurrency 0 were all
// accepted and the platform grew by 1.3 GB. The queue holds at most MaxBytes of payloads (here 3
// events' worth), refuses past it with Lambda's throttling error, and drops events older than
// MaxAge, which makes room again.
func TestEventQueueIsBoundedBySizeAndAge(t *testing.T) {
	tp := startPlatform(t, Config{AsyncQueue: AsyncQueueLimits{MaxBytes: 3 << 20, MaxAge: 400 * time.Millisecond}})
	tp.create("parked", nil)
	if resp, body := tp.putConcurrency("parked", 0); resp.StatusCode != http.StatusOK {
		t.Fatalf("reserved concurrency 0: %d %s", resp.StatusCode, body)
	}
	payload := `{"pad":"` + strings.Repeat("x", 1<<20-20) + `"}`
	event := func() (int, string) {
		resp, body := tp.call("POST", "/2015-03-31/functions/parked/invocations", json_(payload),
			map[string]string{"X-Amz-Invocation-Type": "Event"})
		return resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType") + " " + string(body)
	}
	for i := 0; i < 3; i++ {
		if code, body := event(); code != http.StatusAccepted {
			t.Fatalf("event %d: %d %s", i, code, body)
		}
	}
	code, body := event()
	if code != http.StatusTooManyRequests || !strings.Contains(body, "TooManyRequestsException") || !strings.Contains(body, "Rate Exceeded.") {
		t.Fatalf("a 4th MB over a 3 MiB queue: %d %s, want 429 TooManyRequestsException", code, body)
	}
	// the three wait for capacity that never comes, and are dropped at 400 ms
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := event(); code == http.StatusAccepted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the queue never made room: events past their maximum age were kept")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// json_ passes a JSON text through call's marshalling unchanged.
type json_ string

func (j json_) MarshalJSON() ([]byte, error) { return []byte(j), nil }
