package platform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// A function deleted and created again under the same name while a call is in flight: the old
// instance, on release, must not serve the new function (issue #29: it went back to the warm
// pool, and the new function ran with the old memory size and environment). The same for a
// version the new function publishes under the old one's number.
func TestRecreatedFunctionIsNeverServedByTheDeletedOnesInstance(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	const name = "again"
	create := func(memoryMB int, ver string) {
		tp.create(name, map[string]any{"MemorySize": memoryMB, "Environment": map[string]any{"Variables": map[string]string{"VER": ver}}})
		resp, body := tp.call("POST", "/2015-03-31/functions/"+name+"/versions", map[string]any{}, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("publish: %d %s", resp.StatusCode, body)
		}
	}
	invoke := func(q, payload string) agentReply {
		resp, body := tp.call("POST", "/2015-03-31/functions/"+name+"/invocations"+q, json.RawMessage(payload), nil)
		var r agentReply
		json.Unmarshal(body, &r)
		if resp.StatusCode != http.StatusOK || !r.OK {
			t.Errorf("invoke %q: %d %s", q, resp.StatusCode, body)
		}
		return r
	}
	create(128, "1")
	first := map[string]string{}
	for _, q := range []string{"", "?Qualifier=1"} { // warm both pools, so each has an instance to reuse
		first[q] = invoke(q, `{"workload":{"kind":"noop"}}`).Instance.ID
	}
	var wg sync.WaitGroup
	for _, q := range []string{"", "?Qualifier=1"} { // calls in flight on those instances
		wg.Add(1)
		go func(q string) {
			defer wg.Done()
			invoke(q, `{"workload":{"kind":"spin","iterations":60000000}}`)
		}(q)
	}
	time.Sleep(300 * time.Millisecond)
	if resp, body := tp.call("DELETE", "/2015-03-31/functions/"+name, nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	create(1024, "2")
	wg.Wait() // the old instances are released now, after the name exists again
	for _, q := range []string{"", "?Qualifier=1"} {
		r := invoke(q, `{"workload":{"kind":"noop"}}`)
		what := fmt.Sprintf("re-created function%s", q)
		if r.Instance.ID == first[q] || !r.Cold {
			t.Errorf("%s: served by instance %s (cold %v), the deleted function's was %s", what, r.Instance.ID, r.Cold, first[q])
		}
		if got := r.Instance.MemoryLimit; got == nil || *got != 1024<<20 {
			t.Errorf("%s: memory limit %s, want 1024 MiB", what, func() string {
				if got == nil {
					return "none"
				}
				return fmt.Sprint(*got)
			}())
		}
	}
}

// After a restart the counter goes on from the largest stored generation.
func TestGenerationsGoOnAfterTheStoredOnes(t *testing.T) {
	fns := map[fnKey]*Function{
		key("a"): {Generation: 3, Versions: []*publishedVersion{{Generation: 2}}},
		key("b"): {Generation: 5},
		key("c"): {Generation: 4, Versions: []*publishedVersion{{Generation: 9}}},
	}
	if got := lastGeneration(fns); got != 9 {
		t.Errorf("lastGeneration %d, want 9", got)
	}
}
