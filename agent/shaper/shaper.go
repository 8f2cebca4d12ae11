// Package shaper is a thin reverse proxy that gives a local storage server (VersityGW for S3,
// moto for DynamoDB) the request latency and the request-rate limits of the cloud service it
// stands in for, from a calibration table (src/faascope/calibration/tables/standins-aws@*.json;
// the Python side writes the effective figures into the shaper's JSON configuration, so no
// figure has a copy here).
//
// Latency. Each request is classed as a write or a read (S3: PUT/POST/DELETE vs GET/HEAD;
// DynamoDB: by its X-Amz-Target operation) and given a latency drawn from a lognormal
// distribution through the calibrated median m and 99th percentile q:
//
//	L = exp(mu + sigma*Z), Z ~ N(0,1), mu = ln m, sigma = (ln q - ln m) / z99, z99 = Φ⁻¹(0.99)
//
// so that median(L) = m and P99(L) = q exactly. The latency is the whole time the cloud takes
// for a small (1 KB) request, the local server's time included: the answer is held until L has
// passed since the request arrived (reads) or since its body was fully received (writes, whose
// body crosses the function's own network token bucket first), and a local server slower than
// L adds nothing more. So the local host's load is absorbed up to L, as the cloud's service
// time does not depend on how busy this machine is, and transfer time stays per function.
//
// Rate limits (S3 only). S3 serves 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per
// second per partitioned prefix; a request beyond its prefix's token bucket is answered with
// S3's own 503 SlowDown error, which the AWS SDKs retry as a throttling error. The prefix of a
// path-style request /bucket/a/b/key is "bucket/a/b/" (the key's directory).
package shaper

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Z99 is the standard normal distribution's 0.99 quantile, Φ⁻¹(0.99) = √2·erf⁻¹(0.98).
var Z99 = math.Sqrt2 * math.Erfinv(2*0.99-1)

// Latency is a calibrated latency distribution, in milliseconds.
type Latency struct {
	MedianMs float64 `json:"median_ms"`
	P99Ms    float64 `json:"p99_ms"`
}

// Lognormal returns mu and sigma of the lognormal through the median and the 99th percentile.
func (l Latency) Lognormal() (mu, sigma float64) {
	mu = math.Log(l.MedianMs)
	sigma = (math.Log(l.P99Ms) - mu) / Z99
	return mu, sigma
}

func (l Latency) valid() error {
	if !(l.MedianMs > 0) || !(l.P99Ms >= l.MedianMs) {
		return fmt.Errorf("latency needs 0 < median_ms <= p99_ms (got %v, %v)", l.MedianMs, l.P99Ms)
	}
	return nil
}

// RateLimit is a token bucket per prefix: PerS requests per second, Burst requests at once.
type RateLimit struct {
	PerS  float64 `json:"per_s"`
	Burst float64 `json:"burst"`
}

// Route is one listener: a service shaped in front of its backend.
type Route struct {
	Listen  string `json:"listen"`
	Backend string `json:"backend"`
	// Service is "s3" or "dynamodb"; it decides how requests are classed.
	Service string  `json:"service"`
	Write   Latency `json:"write"`
	Read    Latency `json:"read"`
	// per-prefix request rates (S3); nil: none
	WriteRate *RateLimit `json:"write_rate,omitempty"`
	ReadRate  *RateLimit `json:"read_rate,omitempty"`
}

// Config is the shaper's configuration file.
type Config struct {
	// Seed of the latency draws; 0 draws a seed at start.
	Seed   uint64  `json:"seed"`
	Routes []Route `json:"routes"`
}

// Class of a request.
type Class int

const (
	Unshaped Class = iota
	Read
	Write
)

func (c Class) String() string { return [...]string{"unshaped", "read", "write"}[c] }

var dynamoWrites = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true,
	"BatchWriteItem": true, "TransactWriteItems": true}
var dynamoReads = map[string]bool{"GetItem": true, "Query": true, "Scan": true,
	"BatchGetItem": true, "TransactGetItems": true}

// Classify says whether r is a read or a write of the service. DynamoDB's control operations
// (CreateTable, DescribeTable, ...) have no calibrated figure and pass unshaped.
func Classify(service string, r *http.Request) Class {
	switch service {
	case "dynamodb":
		target := r.Header.Get("X-Amz-Target")
		op := target[strings.LastIndexByte(target, '.')+1:]
		switch {
		case dynamoWrites[op]:
			return Write
		case dynamoReads[op]:
			return Read
		}
		return Unshaped
	default:
		switch r.Method {
		case http.MethodPut, http.MethodPost, http.MethodDelete:
			return Write
		case http.MethodGet, http.MethodHead:
			return Read
		}
		return Unshaped
	}
}

// S3Prefix is the partition prefix of a path-style S3 request ("bucket/dir/"), "" for a
// request on no object (the service or a bucket).
func S3Prefix(path string) string {
	p := strings.TrimPrefix(path, "/")
	bucket, key, ok := strings.Cut(p, "/")
	if !ok || key == "" {
		return ""
	}
	return bucket + "/" + key[:strings.LastIndexByte(key, '/')+1]
}

// Sampler draws latencies; safe for concurrent use.
type Sampler struct {
	mu  sync.Mutex
	rng *mrand.Rand
}

func NewSampler(seed uint64) *Sampler {
	if seed == 0 {
		seed = mrand.Uint64() | 1
	}
	return &Sampler{rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Draw returns one latency from l's lognormal.
func (s *Sampler) Draw(l Latency) time.Duration {
	mu, sigma := l.Lognormal()
	s.mu.Lock()
	z := s.rng.NormFloat64()
	s.mu.Unlock()
	return time.Duration(math.Exp(mu+sigma*z) * float64(time.Millisecond))
}

// buckets are the per-prefix token buckets of one class.
type buckets struct {
	limit RateLimit
	mu    sync.Mutex
	m     map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// sweepAbove is how many prefixes a class keeps before it forgets the full ones.
const sweepAbove = 4096

// allow spends one token of prefix's bucket at now, or says the request is over the rate.
func (b *buckets) allow(prefix string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) > sweepAbove {
		b.sweep(now)
	}
	k := b.m[prefix]
	if k == nil {
		k = &bucket{tokens: b.limit.Burst, last: now}
		b.m[prefix] = k
	}
	k.tokens = math.Min(b.limit.Burst, k.tokens+now.Sub(k.last).Seconds()*b.limit.PerS)
	k.last = now
	if k.tokens < 1 {
		return false
	}
	k.tokens--
	return true
}

// sweep forgets the buckets that have refilled to full by now: a new bucket starts full, so
// forgetting them changes nothing, and a campaign's many prefixes (one per function, say) do
// not accumulate.
func (b *buckets) sweep(now time.Time) {
	for p, k := range b.m {
		if k.tokens+now.Sub(k.last).Seconds()*b.limit.PerS >= b.limit.Burst {
			delete(b.m, p)
		}
	}
}

func newBuckets(l *RateLimit) *buckets {
	if l == nil || l.PerS <= 0 {
		return nil
	}
	burst := l.Burst
	if burst < 1 {
		burst = 1
	}
	return &buckets{limit: RateLimit{PerS: l.PerS, Burst: burst}, m: map[string]*bucket{}}
}

// Stats counts what a handler did.
type Stats struct {
	Reads, Writes, Unshaped, SlowDowns atomic.Int64
}

// Handler is one route's shaping proxy.
type Handler struct {
	route         Route
	sampler       *Sampler
	proxy         *httputil.ReverseProxy
	writes, reads *buckets
	requestIDs    atomic.Uint64
	Stats         Stats
}

type ctxKey struct{}

// timing is what the transport needs to hold a response: the drawn latency and when the
// request's body was received in full.
type timing struct {
	latency time.Duration
	start   time.Time
	bodyEnd atomic.Int64 // unix ns; 0 while the body is being read
}

// NewHandler returns the shaping proxy of a route.
func NewHandler(route Route, sampler *Sampler) (*Handler, error) {
	if err := route.Write.valid(); err != nil {
		return nil, fmt.Errorf("route %s write: %w", route.Listen, err)
	}
	if err := route.Read.valid(); err != nil {
		return nil, fmt.Errorf("route %s read: %w", route.Listen, err)
	}
	if route.Service != "s3" && route.Service != "dynamodb" {
		return nil, fmt.Errorf("route %s: service must be s3 or dynamodb (got %q)", route.Listen, route.Service)
	}
	target, err := url.Parse(route.Backend)
	if err != nil || target.Host == "" {
		return nil, fmt.Errorf("route %s: backend %q is not a URL", route.Listen, route.Backend)
	}
	h := &Handler{route: route, sampler: sampler,
		writes: newBuckets(route.WriteRate), reads: newBuckets(route.ReadRate)}
	// The Host header is kept as the client sent it (NewSingleHostReverseProxy only rewrites the
	// URL), so S3 signatures, which cover it, still verify at the backend.
	h.proxy = httputil.NewSingleHostReverseProxy(target)
	base := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		// the client decides about 100-continue; the backend sees its Expect header
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	h.proxy.Transport = holdingTransport{base}
	h.proxy.ErrorLog = nil
	return h, nil
}

// holdingTransport holds each backend answer until the request's drawn latency has passed.
type holdingTransport struct{ base http.RoundTripper }

func (t holdingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if tm, ok := r.Context().Value(ctxKey{}).(*timing); ok && tm.latency > 0 {
		from := tm.start
		if end := tm.bodyEnd.Load(); end != 0 {
			from = time.Unix(0, end)
		}
		if wait := time.Until(from.Add(tm.latency)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-r.Context().Done():
			}
		}
	}
	return resp, err
}

// bodyTimer records when a request body has been read to its end.
type bodyTimer struct {
	io.ReadCloser
	tm *timing
}

func (b bodyTimer) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.tm.bodyEnd.CompareAndSwap(0, time.Now().UnixNano())
	}
	return n, err
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	class := Classify(h.route.Service, r)
	tm := &timing{start: start}
	switch class {
	case Write:
		h.Stats.Writes.Add(1)
		tm.latency = h.sampler.Draw(h.route.Write)
	case Read:
		h.Stats.Reads.Add(1)
		tm.latency = h.sampler.Draw(h.route.Read)
	default:
		h.Stats.Unshaped.Add(1)
	}
	if h.route.Service == "s3" && class != Unshaped {
		b := h.reads
		if class == Write {
			b = h.writes
		}
		if prefix := S3Prefix(r.URL.Path); b != nil && prefix != "" && !b.allow(prefix, start) {
			h.Stats.SlowDowns.Add(1)
			h.slowDown(w, r, tm)
			return
		}
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = bodyTimer{r.Body, tm}
	} else {
		tm.bodyEnd.Store(start.UnixNano())
	}
	h.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, tm)))
}

// slowDown answers as S3 does when a prefix's request rate is exceeded (HTTP 503, error code
// SlowDown), after the request's round trip: the body is drained first, as S3 reads it.
func (h *Handler) slowDown(w http.ResponseWriter, r *http.Request, tm *timing) {
	if r.Body != nil {
		io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	}
	time.Sleep(time.Until(tm.start.Add(tm.latency)))
	id := fmt.Sprintf("FAASCOPE%08X", h.requestIDs.Add(1))
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-amz-request-id", id)
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>`+
		`<Resource>%s</Resource><RequestId>%s</RequestId><HostId>faascope-shaper</HostId></Error>`,
		xmlEscape(r.URL.Path), id)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// LoadConfig reads a configuration file.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Routes) == 0 {
		return c, fmt.Errorf("%s: no routes", path)
	}
	return c, nil
}
