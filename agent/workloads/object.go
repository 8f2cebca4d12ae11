package workloads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithy "github.com/aws/smithy-go"
)

const (
	// MaxObjectSize is S3's limit for one PUT (5 GiB).
	MaxObjectSize = 5 << 30
	// MaxObjectCount bounds one invocation's requests.
	MaxObjectCount = 1_000_000
	// MaxParallelism bounds concurrent requests (and connections) from one instance.
	MaxParallelism = 1024
	// DefaultMaxBackoffMs is the AWS SDKs' default longest wait between attempts.
	DefaultMaxBackoffMs = 20000
	// DefaultObjectPrefix is where objects go when neither the request nor FAASCOPE_S3_PREFIX
	// names a prefix.
	DefaultObjectPrefix = "faascope/"
)

// Object PUTs or GETs count objects of object_size bytes through the S3 API (AWS S3 or any
// S3-compatible server), sequentially or with a parallelism. Object i of invocation index is
// at key {prefix}{index}/{i}, so concurrent invocations given distinct indexes use distinct
// keys, and invocations with the same index read the same objects. See docs/storage.md.
type Object struct {
	Kind          string `json:"kind"`
	API           string `json:"api"`
	Op            string `json:"op"`
	ObjectSize    int64  `json:"object_size"`
	Count         int64  `json:"-"`
	CountIn       *int64 `json:"count"`
	Parallelism   int    `json:"-"`
	ParallelismIn *int   `json:"parallelism"`
	Bucket        string `json:"bucket"`
	Prefix        string `json:"prefix"`
	Index         int64  `json:"index"`
	Endpoint      string `json:"endpoint"`
	AWSAccess
	PathStyle *bool `json:"path_style"`
	RetryParams
	Checksum string `json:"checksum"`
	Source   string `json:"source"`
	Prepare  *bool  `json:"prepare"`
	Drop     *bool  `json:"drop"`
	OnError  string `json:"on_error"`

	s3cfg s3Target
}

// s3Target is a validated S3 client configuration, shared by object, transfer and app.
type s3Target struct {
	ep        awsEndpoint
	bucket    string
	prefix    string
	pathStyle bool
	checksum  string
	retry     RetrySettings
}

// ObjectResult is the "workload" object of an object response.
type ObjectResult struct {
	Common
	API               string        `json:"api"`
	Op                string        `json:"op"`
	ObjectSize        int64         `json:"object_size"`
	Count             int64         `json:"count"`
	Parallelism       int           `json:"parallelism"`
	Bucket            string        `json:"bucket"`
	Endpoint          string        `json:"endpoint"`
	Region            string        `json:"region"`
	PathStyle         bool          `json:"path_style"`
	FirstKey          string        `json:"first_key"`
	LastKey           string        `json:"last_key"`
	Checksum          string        `json:"checksum"`
	CredentialsSource string        `json:"credentials_source"`
	Retry             RetrySettings `json:"retry"`
	Requests          RequestCounts `json:"requests"`
	ClientReused      bool          `json:"client_reused"`
	Prepared          bool          `json:"prepared"`
	Dropped           bool          `json:"dropped"`
	Throughput        float64       `json:"throughput_bytes_per_s"`
	IOPS              float64       `json:"iops"`
	Latency           *Latency      `json:"latency"`
	TTFB              *Latency      `json:"ttfb,omitempty"`
	ErrorSample       *string       `json:"error_sample"`

	// raw latencies of a systematic sample of the requests (latency.go, LatencySamples)
	LatencySamples *LatencySamples `json:"latency_samples"`
}

// RequestCounts sums up the requests of the timed region. Attempts and throttles come from
// the SDK's retry layer, so a request retried twice is one request and three attempts.
type RequestCounts struct {
	OK        int64 `json:"ok"`
	Failed    int64 `json:"failed"`
	Attempts  int64 `json:"attempts"`
	Retries   int64 `json:"retries"`
	Throttles int64 `json:"throttles"`
}

func (o *Object) Validate() error {
	if err := oneOf("workload.api", &o.API, "s3", "s3", "gcs"); err != nil {
		return err
	}
	if o.API == "gcs" {
		return Invalid("workload.api", "\"gcs\" (GCS's JSON API) is not implemented; use \"s3\" with endpoint https://storage.googleapis.com and HMAC keys (GCS's XML API speaks S3)")
	}
	if err := checkBatchOp(&o.Op); err != nil {
		return err
	}
	if o.ObjectSize < 0 || o.ObjectSize > MaxObjectSize {
		return Invalid("workload.object_size", "must be between 0 and %d bytes (got %d)", int64(MaxObjectSize), o.ObjectSize)
	}
	if err := checkBatch(&o.Count, o.CountIn, &o.Parallelism, o.ParallelismIn, o.Index, &o.Source, &o.OnError); err != nil {
		return err
	}
	t, err := newS3Target(o.Endpoint, o.Region, o.Bucket, o.Prefix, o.PathStyle, o.AccessKeyID, o.SecretAccessKey,
		o.SessionToken, o.Checksum, orDefault(o.MaxAttemptsIn, 1), o.RetryMode, orDefault(o.MaxBackoffMsIn, DefaultMaxBackoffMs), o.TimeoutMs)
	if err != nil {
		return err
	}
	o.s3cfg = t
	defaultPrepareDrop(o.Op, &o.Prepare, &o.Drop)
	return nil
}

func checkParallelism(p int) error {
	if p < 1 || p > MaxParallelism {
		return Invalid("workload.parallelism", "must be between 1 and %d (got %d)", MaxParallelism, p)
	}
	return nil
}

func newS3Target(endpoint, region, bucket, prefix string, pathStyle *bool, keyID, secret, token, checksum string,
	maxAttempts int, retryMode string, maxBackoffMs, timeoutMs int64) (s3Target, error) {
	var t s3Target
	ep, err := resolveAWS(endpoint, region, keyID, secret, token, "FAASCOPE_S3_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3")
	if err != nil {
		return t, err
	}
	t.ep = ep
	t.bucket = bucket
	if t.bucket == "" {
		t.bucket = firstEnv("FAASCOPE_S3_BUCKET")
	}
	if t.bucket == "" {
		return t, Invalid("workload.bucket", "required (or set FAASCOPE_S3_BUCKET in the function's environment)")
	}
	t.prefix = prefix
	if t.prefix == "" {
		t.prefix = firstEnv("FAASCOPE_S3_PREFIX")
	}
	if t.prefix == "" {
		t.prefix = DefaultObjectPrefix
	}
	if len(t.prefix) > 512 {
		return t, Invalid("workload.prefix", "longer than 512 bytes")
	}
	// Path-style addressing by default for a custom endpoint (local servers have no DNS for
	// virtual-hosted buckets), virtual-hosted on AWS, as the SDK does.
	t.pathStyle = ep.Endpoint != ""
	if pathStyle != nil {
		t.pathStyle = *pathStyle
	}
	if err := oneOf("workload.checksum", &checksum, "when_required", "when_required", "when_supported"); err != nil {
		return t, err
	}
	t.checksum = checksum
	t.retry, err = retryParams(maxAttempts, retryMode, maxBackoffMs, timeoutMs, "aws-sdk-go-v2")
	return t, err
}

// objectClient is a cached S3 client with its retry counter.
type objectClient struct {
	s3    *s3.Client
	retry *countingRetryer
}

var s3Clients clientCache

func (t s3Target) client(parallelism int) (*objectClient, bool) {
	// One client per connection-relevant configuration (not per bucket or prefix), with a pool
	// that keeps as many idle connections as the largest parallelism may use.
	k := t
	k.bucket, k.prefix = "", ""
	key := fmt.Sprintf("%+v", k)
	v, reused := s3Clients.get(key, func() any {
		r := newRetryer(t.retry)
		cfg := t.ep.awsConfig(r, MaxParallelism, time.Duration(t.retry.TimeoutS*float64(time.Second)))
		c := s3.NewFromConfig(cfg, func(o *s3.Options) {
			if t.ep.Endpoint != "" {
				o.BaseEndpoint = aws.String(t.ep.Endpoint)
			}
			o.UsePathStyle = t.pathStyle
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
			if t.checksum == "when_supported" {
				o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
				o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
			}
			o.DisableLogOutputChecksumValidationSkipped = true
		})
		return &objectClient{s3: c, retry: r}
	})
	return v.(*objectClient), reused
}

// endpointForResult drops any user:password part of the URL; "" means AWS's own endpoint.
func endpointForResult(e string) string {
	if e == "" {
		return ""
	}
	u, err := url.Parse(e)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}

func (t s3Target) put(ctx context.Context, c *objectClient, key string, body []byte) error {
	_, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
	if err != nil {
		return storageError("put", t.bucket, key, err)
	}
	return nil
}

// get reads the object into buf (grown as needed) and returns it with the time to first byte.
func (t s3Target) get(ctx context.Context, c *objectClient, key string, buf []byte) ([]byte, time.Duration, error) {
	t0 := time.Now()
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, 0, storageError("get", t.bucket, key, err)
	}
	defer out.Body.Close()
	ttfb := time.Since(t0)
	if out.ContentLength != nil && int64(cap(buf)) < *out.ContentLength {
		buf = make([]byte, 0, *out.ContentLength)
	}
	b := bytes.NewBuffer(buf[:0])
	if _, err := b.ReadFrom(out.Body); err != nil {
		return nil, 0, storageError("get", t.bucket, key, err)
	}
	return b.Bytes(), ttfb, nil
}

// discard reads the object and throws it away, returning bytes read and time to first byte.
func (t s3Target) discard(ctx context.Context, c *objectClient, key string, chunk []byte) (int64, time.Duration, error) {
	t0 := time.Now()
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(key)})
	if err != nil {
		return 0, 0, storageError("get", t.bucket, key, err)
	}
	defer out.Body.Close()
	ttfb := time.Since(t0)
	var n int64
	for {
		m, err := out.Body.Read(chunk)
		n += int64(m)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, 0, storageError("get", t.bucket, key, err)
		}
	}
	return n, ttfb, nil
}

func (t s3Target) del(ctx context.Context, c *objectClient, key string) error {
	_, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(t.bucket), Key: aws.String(key)})
	if err != nil {
		return storageError("delete", t.bucket, key, err)
	}
	return nil
}

// storageError names the operation and object and keeps the service's error code, never
// credentials (the SDK's messages do not contain them).
func storageError(op, bucket, key string, err error) *Error {
	var ae smithy.APIError
	msg := err.Error()
	if errors.As(err, &ae) {
		msg = ae.ErrorCode() + ": " + ae.ErrorMessage()
		if isThrottle(err) {
			msg = "throttled: " + msg
		}
	}
	return &Error{Type: IOError, Message: fmt.Sprintf("%s %s/%s: %s", op, bucket, key, strings.TrimSpace(msg))}
}

func (o *Object) key(i int64) string { return fmt.Sprintf("%s%d/%d", o.s3cfg.prefix, o.Index, i) }

func (o *Object) Run(ctx context.Context) (any, error) {
	if o.s3cfg.bucket == "" {
		if err := o.Validate(); err != nil {
			return nil, err
		}
	}
	t := o.s3cfg
	c, reused := t.client(o.Parallelism)
	res := ObjectResult{Common: Common{Kind: "object"}, API: o.API, Op: o.Op, ObjectSize: o.ObjectSize,
		Count: o.Count, Parallelism: o.Parallelism, Bucket: t.bucket, Endpoint: endpointForResult(t.ep.Endpoint),
		Region: t.ep.Region, PathStyle: t.pathStyle, FirstKey: o.key(0), LastKey: o.key(o.Count - 1),
		Checksum: t.checksum, CredentialsSource: t.ep.CredentialsSource, Retry: t.retry, ClientReused: reused}

	body, err := batchData(o.ObjectSize, o.Op == "put" || *o.Prepare, o.Source)
	if err != nil {
		return nil, err
	}
	if *o.Prepare {
		if err := runUntimed(ctx, o.Count, o.Parallelism, "prepare: ", func(ctx context.Context, i int64) (int64, time.Duration, error) {
			return 0, 0, t.put(ctx, c, o.key(i), body)
		}); err != nil {
			return nil, err
		}
		res.Prepared = true
	}

	var fn reqFunc
	if o.Op == "put" {
		fn = func(ctx context.Context, i int64) (int64, time.Duration, error) {
			return o.ObjectSize, 0, t.put(ctx, c, o.key(i), body)
		}
	} else {
		body = nil
		chunks := make(chan []byte, o.Parallelism)
		for w := 0; w < o.Parallelism; w++ {
			chunks <- make([]byte, min(max(o.ObjectSize, 1), 1<<20))
		}
		fn = func(ctx context.Context, i int64) (int64, time.Duration, error) {
			chunk := <-chunks
			defer func() { chunks <- chunk }()
			n, ttfb, err := t.discard(ctx, c, o.key(i), chunk)
			if err == nil && n != o.ObjectSize {
				err = &Error{Type: IOError, Message: fmt.Sprintf("get %s/%s: %d bytes, expected object_size %d", t.bucket, o.key(i), n, o.ObjectSize)}
			}
			return n, ttfb, err
		}
	}
	b, err := runTimed(ctx, o.Count, o.Parallelism, o.OnError, c.retry.snapshot, fn)
	if err != nil {
		return nil, err
	}
	b.report(&res.Common, &res.Requests, &res.Latency, &res.LatencySamples, &res.ErrorSample, &res.Throughput, &res.IOPS)
	if o.Op == "get" {
		res.TTFB = b.st.ttfb.summary()
	}
	if *o.Drop {
		if err := runUntimed(ctx, o.Count, o.Parallelism, "drop: ", func(ctx context.Context, i int64) (int64, time.Duration, error) {
			return 0, 0, t.del(ctx, c, o.key(i))
		}); err != nil {
			return nil, err
		}
		res.Dropped = true
	}
	return res, nil
}

func prefixError(p string, err error) *Error {
	e := AsError(err)
	return &Error{Type: e.Type, Message: p + e.Message}
}
