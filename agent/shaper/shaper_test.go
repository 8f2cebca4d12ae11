package shaper

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// Z99 against the published value of the standard normal 0.99 quantile (2.3263478740, e.g.
// NIST/SEMATECH e-Handbook, table of the normal distribution; R: qnorm(0.99)).
func TestZ99(t *testing.T) {
	if math.Abs(Z99-2.3263478740408408) > 1e-12 {
		t.Fatalf("Z99 = %.15f", Z99)
	}
}

// The sampled median and 99th percentile match the calibrated ones within sampling error. The
// standard error of a sample p-quantile of n draws is sqrt(p(1-p)/n)/f(x_p); in log space the
// density at the quantile is φ(z_p)/sigma, so SE(ln x̂_p) = sigma·sqrt(p(1-p)/n)/φ(z_p). The test
// allows 4 standard errors (a fixed seed makes it deterministic; 4 SE would fail by chance
// 6 times in 100,000 for another seed).
func TestLognormalMatchesMedianAndP99(t *testing.T) {
	// Skyrise's S3 Standard and DynamoDB write figures (ms), as in standins-aws@2026-11-23
	for _, l := range []Latency{{36.99, 115.09}, {17.66, 82.11}, {5.57, 11.65}, {4.80, 6.02}} {
		s := NewSampler(20261123)
		const n = 200_000
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(s.Draw(l)) / float64(time.Millisecond)
		}
		slices.Sort(xs)
		_, sigma := l.Lognormal()
		phi := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
		for _, c := range []struct{ p, z, want float64 }{{0.5, 0, l.MedianMs}, {0.99, Z99, l.P99Ms}} {
			got := xs[int(c.p*n)]
			se := sigma * math.Sqrt(c.p*(1-c.p)/n) / phi(c.z)
			if d := math.Abs(math.Log(got / c.want)); d > 4*se {
				t.Errorf("%v: sampled q%.2f = %.3f ms, want %.3f (|ln ratio| %.4f > 4 SE %.4f)", l, c.p, got, c.want, d, 4*se)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		service, method, target string
		want                    Class
	}{
		{"s3", "PUT", "", Write}, {"s3", "POST", "", Write}, {"s3", "DELETE", "", Write},
		{"s3", "GET", "", Read}, {"s3", "HEAD", "", Read}, {"s3", "OPTIONS", "", Unshaped},
		{"dynamodb", "POST", "DynamoDB_20120810.PutItem", Write},
		{"dynamodb", "POST", "DynamoDB_20120810.UpdateItem", Write},
		{"dynamodb", "POST", "DynamoDB_20120810.DeleteItem", Write},
		{"dynamodb", "POST", "DynamoDB_20120810.GetItem", Read},
		{"dynamodb", "POST", "DynamoDB_20120810.Query", Read},
		{"dynamodb", "POST", "DynamoDB_20120810.Scan", Read},
		{"dynamodb", "POST", "DynamoDB_20120810.CreateTable", Unshaped},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "/", nil)
		if c.target != "" {
			r.Header.Set("X-Amz-Target", c.target)
		}
		if got := Classify(c.service, r); got != c.want {
			t.Errorf("%s %s %s: %v, want %v", c.service, c.method, c.target, got, c.want)
		}
	}
}

func TestS3Prefix(t *testing.T) {
	for path, want := range map[string]string{
		"/": "", "/b": "", "/b/": "", "/b/k": "b/", "/b/d/k": "b/d/", "/b/d/e/k": "b/d/e/",
	} {
		if got := S3Prefix(path); got != want {
			t.Errorf("S3Prefix(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestBucketsRefillAtTheRate(t *testing.T) {
	b := newBuckets(&RateLimit{PerS: 100, Burst: 10})
	t0 := time.Unix(0, 0)
	for i := 0; i < 10; i++ {
		if !b.allow("p/", t0) {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	if b.allow("p/", t0) {
		t.Fatal("the 11th request at once passed a burst of 10")
	}
	if !b.allow("q/", t0) {
		t.Fatal("another prefix shares the bucket")
	}
	// 100/s: one token per 10 ms
	if b.allow("p/", t0.Add(9*time.Millisecond)) || !b.allow("p/", t0.Add(20*time.Millisecond)) {
		t.Fatal("refill is not 100 per second")
	}
}

func TestBucketsForgetFullPrefixesButNotEmptyOnes(t *testing.T) {
	b := newBuckets(&RateLimit{PerS: 10, Burst: 1})
	t0 := time.Unix(0, 0)
	if !b.allow("hot/", t0) {
		t.Fatal("first request refused")
	}
	for i := 0; i <= sweepAbove; i++ {
		b.allow(fmt.Sprintf("p%d/", i), t0.Add(-time.Hour)) // long ago: full again by t0
	}
	b.allow("new/", t0) // triggers the sweep
	if len(b.m) > 3 {
		t.Fatalf("%d prefixes kept after a sweep at the bound", len(b.m))
	}
	if b.allow("hot/", t0) {
		t.Fatal("a sweep refilled an empty bucket")
	}
}

// Through the proxy: answers are held for at least the drawn latency (a narrow distribution,
// so the lower bound is known), bodies and headers pass, the Host header is the client's, and
// a prefix over its rate gets S3's SlowDown error.
func TestProxyHoldsAndThrottles(t *testing.T) {
	var hosts []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hosts = append(hosts, r.Host)
		w.Header().Set("ETag", `"x"`)
		w.Write(append([]byte(r.Method+" "), b...))
	}))
	defer backend.Close()
	lat := Latency{MedianMs: 30, P99Ms: 31}
	h, err := NewHandler(Route{Listen: "test", Backend: backend.URL, Service: "s3", Write: lat, Read: lat,
		WriteRate: &RateLimit{PerS: 0.001, Burst: 2}}, NewSampler(7))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for i := 0; i < 2; i++ {
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(mustReq(t, "PUT", srv.URL+"/b/dir/k", "hello"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if el := time.Since(t0); el < 29*time.Millisecond {
			t.Errorf("answered after %v, before the ~30 ms drawn latency", el)
		}
		if string(body) != "PUT hello" || resp.Header.Get("ETag") != `"x"` {
			t.Errorf("body %q, etag %q", body, resp.Header.Get("ETag"))
		}
	}
	if want := strings.TrimPrefix(srv.URL, "http://"); hosts[0] != want {
		t.Errorf("backend saw Host %q, want the client's %q", hosts[0], want)
	}
	resp, err := http.DefaultClient.Do(mustReq(t, "PUT", srv.URL+"/b/dir/k3", "x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), "<Code>SlowDown</Code>") {
		t.Errorf("third PUT to a prefix with a burst of 2: %d %s", resp.StatusCode, body)
	}
	// reads have their own bucket (none here) and another prefix its own
	resp, err = http.DefaultClient.Do(mustReq(t, "GET", srv.URL+"/b/dir/k", ""))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET after the PUTs were throttled: %v %v", resp, err)
	}
	resp.Body.Close()
	if h.Stats.SlowDowns.Load() != 1 || h.Stats.Writes.Load() != 3 || h.Stats.Reads.Load() != 1 {
		t.Errorf("stats %d slowdowns, %d writes, %d reads", h.Stats.SlowDowns.Load(), h.Stats.Writes.Load(), h.Stats.Reads.Load())
	}
}

func mustReq(t *testing.T, method, url, body string) *http.Request {
	r, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		r.Body = http.NoBody
		r.ContentLength = 0
	}
	return r
}

func TestConfigErrors(t *testing.T) {
	ok := Latency{1, 2}
	for _, r := range []Route{
		{Backend: "http://x:1", Service: "s3", Write: Latency{0, 1}, Read: ok},
		{Backend: "http://x:1", Service: "s3", Write: Latency{3, 2}, Read: ok},
		{Backend: "http://x:1", Service: "redis", Write: ok, Read: ok},
		{Backend: "nope", Service: "s3", Write: ok, Read: ok},
	} {
		if _, err := NewHandler(r, NewSampler(1)); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}
