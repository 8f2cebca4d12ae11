package platform

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// A weighted alias (RoutingConfig.AdditionalVersionWeights) sends each invocation to its
// additional version with the weight's probability. Over n = 2,000 routing decisions with weight
// 0.2 the count routed to version 2 is Binomial(2000, 0.2); its 0.05 % and 99.95 % quantiles are
// 342 and 460 (scipy: binom.ppf(0.0005, 2000, 0.2), binom.ppf(0.9995, 2000, 0.2)), so a correct
// router leaves [342, 460] less than 0.1 % of the time, and one that ignores the weight (0 or
// 2,000) or inverts it (~1,600) never lands inside. The draws come from a seeded generator, so the
// count is the same every run (a fresh source per run failed CI once in its expected 1 in 1,000:
// 461). Real invocations then show the split reaches the sandbox, with the platform's own source:
// the executed version differs between invocations of the same alias.
func TestWeightedAliasRouting(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 20})
	tp.create("w", nil)
	if resp, body := tp.call("POST", fnPath+"w/versions", map[string]any{}, nil); resp.StatusCode != 201 {
		t.Fatalf("publish 1: %d %s", resp.StatusCode, body)
	}
	if resp, body := tp.call("PUT", fnPath+"w/configuration", map[string]any{"Description": "v2"}, nil); resp.StatusCode != 200 {
		t.Fatalf("update: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "w")
	if resp, body := tp.call("POST", fnPath+"w/versions", map[string]any{}, nil); resp.StatusCode != 201 {
		t.Fatalf("publish 2: %d %s", resp.StatusCode, body)
	}
	resp, body := tp.call("POST", fnPath+"w/aliases", map[string]any{"Name": "canary", "FunctionVersion": "1",
		"RoutingConfig": map[string]any{"AdditionalVersionWeights": map[string]float64{"2": 0.2}}}, nil)
	if resp.StatusCode != 201 || !strings.Contains(string(body), `"AdditionalVersionWeights":{"2":0.2}`) {
		t.Fatalf("create weighted alias: %d %s", resp.StatusCode, body)
	}

	const n = 2000
	routed := 0
	tp.mu.Lock()
	tp.routeDraw = rand.New(rand.NewPCG(26, 28)).Float64
	tp.mu.Unlock()
	for i := 0; i < n; i++ {
		tp.mu.Lock()
		_, tg, err := tp.invocationTarget(InvokeRequest{Name: "w", Qualifier: "canary"})
		tp.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(tg.config.FunctionArn, ":w:canary") {
			t.Fatalf("a routed invocation is answered as %s, not as the alias", tg.config.FunctionArn)
		}
		switch tg.version {
		case "2":
			routed++
		case "1":
		default:
			t.Fatalf("routed to version %q", tg.version)
		}
	}
	t.Logf("%d of %d routed to version 2", routed, n)
	if routed < 342 || routed > 460 {
		t.Fatalf("%d of %d invocations went to version 2 (weight 0.2): outside the binomial 99.9 %% interval [342, 460]", routed, n)
	}

	tp.mu.Lock()
	tp.routeDraw = rand.Float64
	tp.mu.Unlock()

	// Weight 0.5 over real invocations: both versions run (all 40 on one: probability 2^-39).
	resp, body = tp.call("PUT", fnPath+"w/aliases/canary", map[string]any{
		"RoutingConfig": map[string]any{"AdditionalVersionWeights": map[string]float64{"2": 0.5}}}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("update alias: %d %s", resp.StatusCode, body)
	}
	seen := map[string]int{}
	for i := 0; i < 40; i++ {
		resp, _, body := tp.invoke("w:canary", `{"workload":{"kind":"noop"}}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("invoke: %d %s", resp.StatusCode, body)
		}
		seen[resp.Header.Get("X-Amz-Executed-Version")]++
	}
	if len(seen) != 2 || seen["1"] == 0 || seen["2"] == 0 {
		t.Fatalf("executed versions over 40 invocations at weight 0.5: %v", seen)
	}

	// A version an alias routes to cannot be deleted while it does.
	resp, body = tp.call("DELETE", fnPath+"w?Qualifier=2", nil, nil)
	wantAPIError(t, "deleting a routed version", resp, body, 409, "ResourceConflictException", "'canary'")
	// An empty map removes the routing; the answer then has no RoutingConfig, as AWS's.
	resp, body = tp.call("PUT", fnPath+"w/aliases/canary", map[string]any{
		"RoutingConfig": map[string]any{"AdditionalVersionWeights": map[string]float64{}}}, nil)
	if resp.StatusCode != 200 || strings.Contains(string(body), "RoutingConfig") {
		t.Fatalf("removing the routing: %d %s", resp.StatusCode, body)
	}
}
