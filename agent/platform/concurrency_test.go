package platform

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func (tp *testPlatform) putConcurrency(name string, n int) (*http.Response, []byte) {
	return tp.call("PUT", "/2017-10-31/functions/"+name+"/concurrency", map[string]int{"ReservedConcurrentExecutions": n}, nil)
}

func (tp *testPlatform) accountSettings() (AccountLimit, AccountUsage) {
	tp.t.Helper()
	resp, body := tp.call("GET", "/2016-08-19/account-settings/", nil, nil)
	if resp.StatusCode != 200 {
		tp.t.Fatalf("GetAccountSettings: %d %s", resp.StatusCode, body)
	}
	var out struct {
		AccountLimit AccountLimit
		AccountUsage AccountUsage
	}
	json.Unmarshal(body, &out)
	return out.AccountLimit, out.AccountUsage
}

func TestReservedConcurrencyAPI(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 20}) // 2 (a tenth) stay unreserved
	tp.create("a", nil)
	tp.create("b", nil)
	resp, body := tp.call("GET", "/2019-09-30/functions/a/concurrency", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "{}" {
		t.Fatalf("no reservation yet: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.putConcurrency("a", 5)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"ReservedConcurrentExecutions":5}` {
		t.Fatalf("put: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2019-09-30/functions/a/concurrency", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"ReservedConcurrentExecutions":5}` {
		t.Fatalf("get: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2015-03-31/functions/a", nil, nil)
	if !strings.Contains(string(body), `"Concurrency":{"ReservedConcurrentExecutions":5}`) {
		t.Fatalf("GetFunction shows the reservation: %s", body)
	}
	if lim, _ := tp.accountSettings(); lim.ConcurrentExecutions != 20 || lim.UnreservedConcurrentExecutions != 15 {
		t.Fatalf("account settings: %+v", lim)
	}
	resp, body = tp.putConcurrency("b", 14)
	wantAPIError(t, "reserving below the unreserved minimum", resp, body, 400, "InvalidParameterValueException",
		"Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [2].")
	if resp, body = tp.putConcurrency("b", 13); resp.StatusCode != 200 {
		t.Fatalf("13 leaves exactly 2: %d %s", resp.StatusCode, body)
	}
	if resp, body = tp.putConcurrency("a", 5); resp.StatusCode != 200 {
		t.Fatalf("re-putting a function's own value does not count it twice: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.putConcurrency("a", -1)
	wantAPIError(t, "negative", resp, body, 400, "InvalidParameterValueException", "ReservedConcurrentExecutions")
	resp, body = tp.putConcurrency("nope", 1)
	wantAPIError(t, "unknown function", resp, body, 404, "ResourceNotFoundException", "Function not found")
	resp, body = tp.call("DELETE", "/2017-10-31/functions/a/concurrency", nil, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", "/2019-09-30/functions/a/concurrency", nil, nil)
	_, fn := tp.call("GET", "/2015-03-31/functions/a", nil, nil)
	if strings.TrimSpace(string(body)) != "{}" || strings.Contains(string(fn), `"Concurrency"`) {
		t.Fatalf("after delete: %s, GetFunction %s", body, fn)
	}
	if lim, _ := tp.accountSettings(); lim.UnreservedConcurrentExecutions != 7 {
		t.Fatalf("only b's 13 reserved now: %+v", lim)
	}
	// Deleting the function gives its reservation back; a restart keeps the others.
	tp.DeleteFunction(ref("b"))
	if lim, _ := tp.accountSettings(); lim.UnreservedConcurrentExecutions != 20 {
		t.Fatalf("after deleting b: %+v", lim)
	}
	tp.putConcurrency("a", 3)
	p2, err := New(Config{DataDir: tp.cfg.DataDir, Concurrency: 20, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if p2.UnreservedConcurrency() != 17 {
		t.Fatalf("a restarted platform keeps reservations: unreserved %d", p2.UnreservedConcurrency())
	}
}

// concurrentCalls invokes each of names at once (with the test runtime holding each for
// sleepMs) and returns the responses' status codes and throttle reasons by function.
func concurrentCalls(tp *testPlatform, names []string, sleepMs int) map[string][]string {
	var mu sync.Mutex
	out := map[string][]string{}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func(n string) {
			defer wg.Done()
			resp, _, body := tp.invokeRuntime(n, map[string]any{"sleep_ms": sleepMs})
			got := "200"
			if resp.StatusCode != 200 {
				var e struct{ Reason string }
				json.Unmarshal(body, &e)
				got = resp.Header.Get("X-Amzn-ErrorType") + "/" + e.Reason
			}
			mu.Lock()
			out[n] = append(out[n], got)
			mu.Unlock()
		}(n)
	}
	wg.Wait()
	return out
}

func count(list []string, v string) int {
	n := 0
	for _, x := range list {
		if x == v {
			n++
		}
	}
	return n
}

func TestReservedConcurrencyIsEnforced(t *testing.T) {
	// 4 in all: 1 stays unreserved, "res" reserves 2, so "free" gets 4-2 = 2 and "res" 2.
	tp := startPlatform(t, Config{Concurrency: 4})
	zip := zipOf(map[string]string{"bootstrap": testRuntimeFile(t)}, nil)
	for _, n := range []string{"res", "free", "zero"} {
		tp.create(n, map[string]any{"Code": map[string]string{"ZipFile": b64(zip)}})
	}
	if resp, body := tp.putConcurrency("res", 2); resp.StatusCode != 200 {
		t.Fatalf("put: %d %s", resp.StatusCode, body)
	}
	if resp, body := tp.putConcurrency("zero", 0); resp.StatusCode != 200 {
		t.Fatalf("put 0: %d %s", resp.StatusCode, body)
	}
	got := concurrentCalls(tp, []string{"res", "res", "res", "free", "free", "free"}, 2500)
	const reserved = "TooManyRequestsException/ReservedFunctionConcurrentInvocationLimitExceeded"
	const pool = "TooManyRequestsException/ConcurrentInvocationLimitExceeded"
	if count(got["res"], "200") != 2 || count(got["res"], reserved) != 1 {
		t.Errorf("reserved 2, called 3 at once: want 2 served and 1 throttled by its reservation, got %v", got["res"])
	}
	if count(got["free"], "200") != 2 || count(got["free"], pool) != 1 {
		t.Errorf("unreserved pool of 2, called 3 at once: want 2 served and 1 throttled, got %v", got["free"])
	}
	for i := 0; i < 2; i++ {
		resp, _, body := tp.invokeRuntime("zero", map[string]any{})
		var e struct{ Reason string }
		json.Unmarshal(body, &e)
		if resp.StatusCode != 429 || e.Reason != "ReservedFunctionConcurrentInvocationLimitExceeded" {
			t.Fatalf("reserved 0 throttles every invocation: %d %s", resp.StatusCode, body)
		}
	}
	tp.call("DELETE", "/2017-10-31/functions/zero/concurrency", nil, nil)
	if resp, _, body := tp.invokeRuntime("zero", map[string]any{}); resp.StatusCode != 200 {
		t.Fatalf("without its reservation the function runs again: %d %s", resp.StatusCode, body)
	}
	if st := tp.Status(); st.InFlight != 0 {
		t.Fatalf("every slot given back: %d in flight", st.InFlight)
	}
}

// TestConcurrencyQuotaAnswersAreAWSs: a reservation or provisioned concurrency beyond the
// account's quota is refused as AWS refuses it (LocalStack's test_function_concurrency_limits and
// test_provisioned_concurrency_limits recordings): more provisioned concurrency than the account's
// unreserved concurrency names that concurrency; exactly all of it falls below the kept minimum;
// and neither body has the "Type" AWS writes in most of its errors.
func TestConcurrencyQuotaAnswersAreAWSs(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 20}) // 2 (a tenth) stay unreserved
	tp.create("q", nil)
	if resp, body := tp.call("POST", fnPath+"q/versions", map[string]any{}, nil); resp.StatusCode != 201 {
		t.Fatalf("publish: %d %s", resp.StatusCode, body)
	}
	untyped := func(what string, body []byte) {
		t.Helper()
		var m map[string]any
		json.Unmarshal(body, &m)
		if _, ok := m["Type"]; ok {
			t.Errorf("%s: AWS's answer has no Type: %s", what, body)
		}
	}
	provision := func(n int) (*http.Response, []byte) {
		return tp.call("PUT", "/2019-09-30/functions/q/provisioned-concurrency?Qualifier=1", map[string]any{"ProvisionedConcurrentExecutions": n}, nil)
	}
	resp, body := provision(21)
	wantAPIError(t, "provisioned over the account's unreserved", resp, body, 400, "InvalidParameterValueException",
		"Specified ConcurrentExecutions for function is greater than account's unreserved concurrency [20].")
	untyped("provisioned over the account's unreserved", body)
	resp, body = provision(20)
	wantAPIError(t, "provisioned below the unreserved minimum", resp, body, 400, "InvalidParameterValueException",
		"Specified ConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [2].")
	untyped("provisioned below the unreserved minimum", body)
	for _, n := range []int{21, 20} { // AWS answers both with the minimum (no "greater than" for reservations)
		resp, body = tp.putConcurrency("q", n)
		wantAPIError(t, "reserved below the unreserved minimum", resp, body, 400, "InvalidParameterValueException",
			"Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [2].")
		untyped("reserved below the unreserved minimum", body)
	}
}
