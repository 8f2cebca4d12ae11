package workloads

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// RetrySettings is the client's retry configuration. It is part of what an experiment
// measures (a throttled request retried three times is one slow request to the caller), so it
// is always set explicitly and echoed in the result. The default is no retries at all.
type RetrySettings struct {
	Mode         string  `json:"mode"` // "none", "standard" or "adaptive"
	MaxAttempts  int     `json:"max_attempts"`
	MaxBackoffS  float64 `json:"max_backoff_s"`
	RetryQuota   bool    `json:"retry_quota"` // the SDK's client-side retry token bucket
	TimeoutS     float64 `json:"timeout_s"`   // per attempt, 0 = none
	SDKRetryImpl string  `json:"implementation"`
}

// RetryCounts are what the retry layer saw: every attempt, failed or not, and those failed by
// throttling (S3 SlowDown, DynamoDB ProvisionedThroughputExceeded, HTTP 429 ...).
type RetryCounts struct {
	Attempts  int64 `json:"attempts"`
	Retries   int64 `json:"retries"`
	Throttles int64 `json:"throttles"`
}

// retryParams validates the common retry fields of a request. field is the parameter prefix.
func retryParams(maxAttempts int, mode string, maxBackoffMs, timeoutMs int64, impl string) (RetrySettings, error) {
	if maxAttempts < 1 || maxAttempts > 20 {
		return RetrySettings{}, Invalid("workload.max_attempts", "must be between 1 and 20 (got %d)", maxAttempts)
	}
	if mode == "" {
		mode = "standard"
		if maxAttempts == 1 {
			mode = "none"
		}
	}
	switch mode {
	case "none":
		if maxAttempts != 1 {
			return RetrySettings{}, Invalid("workload.retry_mode", "\"none\" needs max_attempts 1 (got %d)", maxAttempts)
		}
	case "standard", "adaptive":
	default:
		return RetrySettings{}, Invalid("workload.retry_mode", "must be one of [\"none\" \"standard\" \"adaptive\"] (got %q)", mode)
	}
	if maxBackoffMs < 1 || maxBackoffMs > 300000 {
		return RetrySettings{}, Invalid("workload.max_backoff_ms", "must be between 1 and 300000 (got %d)", maxBackoffMs)
	}
	if timeoutMs < 0 || timeoutMs > 900000 {
		return RetrySettings{}, Invalid("workload.timeout_ms", "must be between 0 and 900000 (got %d)", timeoutMs)
	}
	return RetrySettings{Mode: mode, MaxAttempts: maxAttempts, MaxBackoffS: float64(maxBackoffMs) / 1000,
		TimeoutS: float64(timeoutMs) / 1000, SDKRetryImpl: impl}, nil
}

// countingRetryer wraps an SDK retryer and counts attempts and throttled attempts.
type countingRetryer struct {
	aws.RetryerV2
	attempts, throttles, failed atomic.Int64
}

func (c *countingRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	release, err := c.RetryerV2.GetAttemptToken(ctx)
	if err != nil {
		return nil, err
	}
	c.attempts.Add(1)
	return func(opErr error) error {
		if opErr != nil {
			c.failed.Add(1)
			if isThrottle(opErr) {
				c.throttles.Add(1)
			}
		}
		return release(opErr)
	}, nil
}

func isThrottle(err error) bool {
	if retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err) == aws.TrueTernary {
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if asErr(err, &status) {
		return status.HTTPStatusCode() == http.StatusTooManyRequests || status.HTTPStatusCode() == http.StatusServiceUnavailable
	}
	return false
}

func (c *countingRetryer) snapshot() RetryCounts {
	return RetryCounts{Attempts: c.attempts.Load(), Throttles: c.throttles.Load()}
}

// newRetryer builds the SDK retryer for the settings: NopRetryer for none, else Standard or
// Adaptive with the client-side retry quota off (a benchmark wants every configured retry).
func newRetryer(s RetrySettings) *countingRetryer {
	var r aws.RetryerV2
	std := func(o *retry.StandardOptions) {
		o.MaxAttempts = s.MaxAttempts
		o.MaxBackoff = time.Duration(s.MaxBackoffS * float64(time.Second))
		o.RateLimiter = ratelimit.None
	}
	switch s.Mode {
	case "none":
		r = aws.NopRetryer{}
	case "adaptive":
		r = retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, std)
		})
	default:
		r = retry.NewStandard(std)
	}
	return &countingRetryer{RetryerV2: r}
}

// awsEndpoint describes where and as whom an AWS-API client talks. Secrets never leave it:
// results carry only CredentialsSource.
type awsEndpoint struct {
	Endpoint          string
	Region            string
	AccessKeyID       string
	SecretAccessKey   string
	SessionToken      string
	CredentialsSource string // "request", "environment" or "anonymous"
}

// resolveAWS fills the endpoint from the request, else the environment (what Lambda sets for
// the function's role: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
// AWS_REGION), else defaults. endpointEnv are service-specific variables tried in order.
func resolveAWS(endpoint, region, keyID, secret, token string, endpointEnv ...string) (awsEndpoint, error) {
	e := awsEndpoint{Endpoint: endpoint, Region: region}
	if e.Endpoint == "" {
		for _, v := range append(endpointEnv, "AWS_ENDPOINT_URL") {
			if s := os.Getenv(v); s != "" {
				e.Endpoint = s
				break
			}
		}
	}
	if e.Endpoint != "" && !strings.HasPrefix(e.Endpoint, "http://") && !strings.HasPrefix(e.Endpoint, "https://") {
		return e, Invalid("workload.endpoint", "must be an http:// or https:// URL (got %q)", e.Endpoint)
	}
	if e.Region == "" {
		e.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	if e.Region == "" {
		e.Region = "us-east-1"
	}
	switch {
	case keyID != "" || secret != "":
		if keyID == "" || secret == "" {
			return e, Invalid("workload.access_key_id", "access_key_id and secret_access_key go together")
		}
		e.AccessKeyID, e.SecretAccessKey, e.SessionToken, e.CredentialsSource = keyID, secret, token, "request"
	case token != "":
		return e, Invalid("workload.session_token", "needs access_key_id and secret_access_key")
	case os.Getenv("AWS_ACCESS_KEY_ID") != "" && os.Getenv("AWS_SECRET_ACCESS_KEY") != "":
		e.AccessKeyID, e.SecretAccessKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		e.SessionToken, e.CredentialsSource = os.Getenv("AWS_SESSION_TOKEN"), "environment"
	default:
		e.CredentialsSource = "anonymous"
	}
	return e, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// awsConfig is an aws.Config for the endpoint, with the given retryer and a connection pool
// big enough for the parallelism (the SDK default keeps 10 idle connections per host).
func (e awsEndpoint) awsConfig(r *countingRetryer, parallelism int, timeout time.Duration) aws.Config {
	client := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = max(parallelism, 10)
		t.MaxIdleConns = max(parallelism, 100)
		t.Proxy = nil // loopback stand-ins must not go through a proxy from the environment
	})
	if timeout > 0 {
		client = client.WithTimeout(timeout)
	}
	cfg := aws.Config{Region: e.Region, HTTPClient: client, Retryer: func() aws.Retryer { return r },
		RetryMaxAttempts: r.MaxAttempts()}
	if e.CredentialsSource != "anonymous" {
		creds := aws.Credentials{AccessKeyID: e.AccessKeyID, SecretAccessKey: e.SecretAccessKey,
			SessionToken: e.SessionToken, Source: e.CredentialsSource}
		cfg.Credentials = aws.NewCredentialsCache(aws.CredentialsProviderFunc(
			func(context.Context) (aws.Credentials, error) { return creds, nil }))
	}
	return cfg
}

// clientCache keeps SDK clients across invocations of a warm instance, as real functions do
// (clients built at init, connections kept alive). Results say whether the client was reused,
// so a first request's connection set-up is visible. The key includes the secret's hash-free
// identity only through the whole struct, which never leaves the process.
type clientCache struct {
	mu sync.Mutex
	m  map[string]any
}

func (c *clientCache) get(key string, build func() any) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]any{}
	}
	if v, ok := c.m[key]; ok {
		return v, true
	}
	v := build()
	c.m[key] = v
	return v, false
}

// AWSAccess names the region and credentials of an AWS(-compatible) service. Workloads embed it
// untagged, so its JSON names stay at the top level of the request.
type AWSAccess struct {
	Region          string `json:"region"`
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	SessionToken    string `json:"session_token"`
}

// RetryParams are a storage client's retry settings as a request gives them (nil = default).
type RetryParams struct {
	MaxAttemptsIn  *int   `json:"max_attempts"`
	RetryMode      string `json:"retry_mode"`
	MaxBackoffMsIn *int64 `json:"max_backoff_ms"`
	TimeoutMs      int64  `json:"timeout_ms"`
}
