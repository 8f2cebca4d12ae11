package workloads

import (
	"context"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/redis/go-redis/v9"
)

const (
	// MaxItemSize is DynamoDB's item limit (400 KB); Redis could hold more, but kv is about
	// small items: use object for large ones.
	MaxItemSize = 400 * 1024
	// DefaultKVPrefix prefixes keys when the request names none.
	DefaultKVPrefix = "faascope:"
)

// KV gets or puts count small items of item_size bytes in a key-value store: Redis (the local
// stand-in, or ElastiCache) or DynamoDB. Item i of invocation index has key
// {prefix}{index}:{i}; DynamoDB items are {"pk": key (S), "v": value (B)}.
type KV struct {
	Kind          string `json:"kind"`
	Backend       string `json:"backend"`
	Op            string `json:"op"`
	ItemSize      int64  `json:"item_size"`
	Count         int64  `json:"-"`
	CountIn       *int64 `json:"count"`
	Parallelism   int    `json:"-"`
	ParallelismIn *int   `json:"parallelism"`
	Index         int64  `json:"index"`
	Prefix        string `json:"prefix"`
	Endpoint      string `json:"endpoint"`
	Table         string `json:"table"`
	AWSAccess
	ConsistentRead bool `json:"consistent_read"`
	RetryParams
	Source  string `json:"source"`
	Prepare *bool  `json:"prepare"`
	Drop    *bool  `json:"drop"`
	OnError string `json:"on_error"`

	target kvTarget
}

// KVResult is the "workload" object of a kv response.
type KVResult struct {
	Common
	Backend           string        `json:"backend"`
	Op                string        `json:"op"`
	ItemSize          int64         `json:"item_size"`
	Count             int64         `json:"count"`
	Parallelism       int           `json:"parallelism"`
	Endpoint          string        `json:"endpoint"`
	Table             *string       `json:"table"`
	FirstKey          string        `json:"first_key"`
	LastKey           string        `json:"last_key"`
	ConsistentRead    bool          `json:"consistent_read"`
	CredentialsSource *string       `json:"credentials_source"`
	Retry             RetrySettings `json:"retry"`
	Requests          RequestCounts `json:"requests"`
	ClientReused      bool          `json:"client_reused"`
	Prepared          bool          `json:"prepared"`
	Dropped           bool          `json:"dropped"`
	Throughput        float64       `json:"throughput_bytes_per_s"`
	IOPS              float64       `json:"iops"`
	Latency           *Latency      `json:"latency"`
	ErrorSample       *string       `json:"error_sample"`

	// raw latencies of a systematic sample of the requests (latency.go, LatencySamples)
	LatencySamples *LatencySamples `json:"latency_samples"`
}

// kvTarget is a validated key-value store configuration, shared by kv, transfer and app.
type kvTarget struct {
	backend    string
	redisURL   string
	redisOpts  *redis.Options
	ep         awsEndpoint
	table      string
	prefix     string
	consistent bool
	retry      RetrySettings
}

func (k *KV) Validate() error {
	if err := checkBatchOp(&k.Op); err != nil {
		return err
	}
	if k.ItemSize < 0 || k.ItemSize > MaxItemSize {
		return Invalid("workload.item_size", "must be between 0 and %d bytes (got %d)", MaxItemSize, k.ItemSize)
	}
	if err := checkBatch(&k.Count, k.CountIn, &k.Parallelism, k.ParallelismIn, k.Index, &k.Source, &k.OnError); err != nil {
		return err
	}
	t, err := newKVTarget(k.Backend, k.Endpoint, k.Table, k.Prefix, k.Region, k.AccessKeyID, k.SecretAccessKey,
		k.SessionToken, k.ConsistentRead, orDefault(k.MaxAttemptsIn, 1), k.RetryMode, orDefault(k.MaxBackoffMsIn, DefaultMaxBackoffMs), k.TimeoutMs)
	if err != nil {
		return err
	}
	k.target = t
	k.Backend = t.backend
	defaultPrepareDrop(k.Op, &k.Prepare, &k.Drop)
	return nil
}

func newKVTarget(backend, endpoint, table, prefix, region, keyID, secret, token string, consistent bool,
	maxAttempts int, retryMode string, maxBackoffMs, timeoutMs int64) (kvTarget, error) {
	t := kvTarget{backend: backend, prefix: prefix, consistent: consistent}
	if err := oneOf("workload.backend", &t.backend, "redis", "redis", "dynamodb"); err != nil {
		return t, err
	}
	if t.prefix == "" {
		t.prefix = DefaultKVPrefix
	}
	if len(t.prefix) > 512 {
		return t, Invalid("workload.prefix", "longer than 512 bytes")
	}
	var err error
	switch t.backend {
	case "redis":
		if table != "" || region != "" || keyID != "" || secret != "" || token != "" || consistent {
			return t, Invalid("workload.backend", "\"redis\" takes no table, region, AWS credentials or consistent_read")
		}
		t.redisURL = endpoint
		if t.redisURL == "" {
			t.redisURL = firstEnv("FAASCOPE_REDIS_URL")
		}
		if t.redisURL == "" {
			return t, Invalid("workload.endpoint", "required for backend \"redis\": redis://host:port/db (or set FAASCOPE_REDIS_URL)")
		}
		t.redisOpts, err = redis.ParseURL(t.redisURL)
		if err != nil {
			return t, Invalid("workload.endpoint", "not a Redis URL: %v", err)
		}
		t.retry, err = retryParams(maxAttempts, retryMode, maxBackoffMs, timeoutMs, "faascope (go-redis retries off)")
		if err == nil && t.retry.Mode == "adaptive" {
			err = Invalid("workload.retry_mode", "\"adaptive\" is an AWS SDK mode; backend \"redis\" has \"none\" or \"standard\"")
		}
	case "dynamodb":
		t.ep, err = resolveAWS(endpoint, region, keyID, secret, token, "AWS_ENDPOINT_URL_DYNAMODB")
		if err != nil {
			return t, err
		}
		t.table = table
		if t.table == "" {
			t.table = firstEnv("FAASCOPE_DYNAMODB_TABLE")
		}
		if t.table == "" {
			return t, Invalid("workload.table", "required for backend \"dynamodb\" (or set FAASCOPE_DYNAMODB_TABLE)")
		}
		t.retry, err = retryParams(maxAttempts, retryMode, maxBackoffMs, timeoutMs, "aws-sdk-go-v2")
	}
	return t, err
}

func (t kvTarget) key(index, i int64) string { return fmt.Sprintf("%s%d:%d", t.prefix, index, i) }

// kvClient is one of a Redis client or a DynamoDB client, with attempt counting.
type kvClient struct {
	redis     *redis.Client
	ddb       *dynamodb.Client
	retry     *countingRetryer // DynamoDB
	attempts  atomic.Int64     // Redis
	throttles atomic.Int64     // Redis: none exist, kept for symmetry
}

var kvClients clientCache

func (t kvTarget) client(parallelism int) (*kvClient, bool) {
	key := fmt.Sprintf("%s|%s|%+v|%+v", t.backend, t.redisURL, t.ep, t.retry)
	parallelism = MaxParallelism // one pool for every parallelism (connections open on demand)
	v, reused := kvClients.get(key, func() any {
		timeout := time.Duration(t.retry.TimeoutS * float64(time.Second))
		if t.backend == "redis" {
			o := *t.redisOpts
			o.MaxRetries = -1 // retries are ours, so they can be counted
			o.PoolSize = max(parallelism, 10)
			o.DisableIdentity = true
			if timeout > 0 {
				o.ReadTimeout, o.WriteTimeout = timeout, timeout
			}
			return &kvClient{redis: redis.NewClient(&o)}
		}
		r := newRetryer(t.retry)
		cfg := t.ep.awsConfig(r, parallelism, timeout)
		c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			if t.ep.Endpoint != "" {
				o.BaseEndpoint = aws.String(t.ep.Endpoint)
			}
		})
		return &kvClient{ddb: c, retry: r}
	})
	return v.(*kvClient), reused
}

func (c *kvClient) counts() RetryCounts {
	if c.retry != nil {
		return c.retry.snapshot()
	}
	return RetryCounts{Attempts: c.attempts.Load(), Throttles: c.throttles.Load()}
}

// redisDo runs one Redis command with the configured retries: exponential backoff with full
// jitter, base 10 ms, capped at max_backoff_s, on network errors and Redis's transient replies.
func (t kvTarget) redisDo(ctx context.Context, c *kvClient, fn func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		c.attempts.Add(1)
		err = fn()
		if err == nil || errors.Is(err, redis.Nil) || attempt >= t.retry.MaxAttempts || !redisRetryable(err) {
			return err
		}
		backoff := math.Min(0.01*math.Pow(2, float64(attempt-1)), t.retry.MaxBackoffS)
		select {
		case <-time.After(time.Duration(mrand.Float64() * backoff * float64(time.Second))):
		case <-ctx.Done():
			return err
		}
	}
}

func redisRetryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	s := err.Error()
	for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "EOF", "connection reset"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func (t kvTarget) put(ctx context.Context, c *kvClient, key string, value []byte) error {
	var err error
	if c.redis != nil {
		err = t.redisDo(ctx, c, func() error { return c.redis.Set(ctx, key, value, 0).Err() })
	} else {
		_, err = c.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.table), Item: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: key}, "v": &ddbtypes.AttributeValueMemberB{Value: value}}})
	}
	if err != nil {
		return kvError("put", key, err)
	}
	return nil
}

func (t kvTarget) get(ctx context.Context, c *kvClient, key string) ([]byte, error) {
	var v []byte
	var err error
	if c.redis != nil {
		err = t.redisDo(ctx, c, func() error {
			var e error
			v, e = c.redis.Get(ctx, key).Bytes()
			return e
		})
		if errors.Is(err, redis.Nil) {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("get %s: no such key", key)}
		}
	} else {
		var out *dynamodb.GetItemOutput
		out, err = c.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.table), ConsistentRead: aws.Bool(t.consistent),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: key}}})
		if err == nil {
			b, ok := out.Item["v"].(*ddbtypes.AttributeValueMemberB)
			if !ok {
				return nil, &Error{Type: IOError, Message: fmt.Sprintf("get %s: no such item (or no binary attribute v)", key)}
			}
			v = b.Value
		}
	}
	if err != nil {
		return nil, kvError("get", key, err)
	}
	return v, nil
}

func (t kvTarget) del(ctx context.Context, c *kvClient, key string) error {
	var err error
	if c.redis != nil {
		err = t.redisDo(ctx, c, func() error { return c.redis.Del(ctx, key).Err() })
	} else {
		_, err = c.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.table),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: key}}})
	}
	if err != nil {
		return kvError("delete", key, err)
	}
	return nil
}

func kvError(op, key string, err error) *Error {
	e := storageError(op, "", key, err)
	e.Message = strings.Replace(e.Message, " /"+key, " "+key, 1)
	return e
}

func (k *KV) Run(ctx context.Context) (any, error) {
	if k.target.backend == "" {
		if err := k.Validate(); err != nil {
			return nil, err
		}
	}
	t := k.target
	c, reused := t.client(k.Parallelism)
	res := KVResult{Common: Common{Kind: "kv"}, Backend: t.backend, Op: k.Op, ItemSize: k.ItemSize, Count: k.Count,
		Parallelism: k.Parallelism, FirstKey: t.key(k.Index, 0), LastKey: t.key(k.Index, k.Count-1),
		ConsistentRead: t.consistent, Retry: t.retry, ClientReused: reused}
	if t.backend == "redis" {
		res.Endpoint = endpointForResult(t.redisURL)
	} else {
		res.Endpoint = endpointForResult(t.ep.Endpoint)
		res.Table = &t.table
		src := t.ep.CredentialsSource
		res.CredentialsSource = &src
	}
	value, err := batchData(k.ItemSize, true, k.Source)
	if err != nil {
		return nil, err
	}
	if *k.Prepare {
		if err := runUntimed(ctx, k.Count, k.Parallelism, "prepare: ", func(ctx context.Context, i int64) (int64, time.Duration, error) {
			return 0, 0, t.put(ctx, c, t.key(k.Index, i), value)
		}); err != nil {
			return nil, err
		}
		res.Prepared = true
	}
	b, err := runTimed(ctx, k.Count, k.Parallelism, k.OnError, c.counts, func(ctx context.Context, i int64) (int64, time.Duration, error) {
		key := t.key(k.Index, i)
		if k.Op == "put" {
			return k.ItemSize, 0, t.put(ctx, c, key, value)
		}
		v, err := t.get(ctx, c, key)
		if err == nil && int64(len(v)) != k.ItemSize {
			err = &Error{Type: IOError, Message: fmt.Sprintf("get %s: %d bytes, expected item_size %d", key, len(v), k.ItemSize)}
		}
		return int64(len(v)), 0, err
	})
	if err != nil {
		return nil, err
	}
	b.report(&res.Common, &res.Requests, &res.Latency, &res.LatencySamples, &res.ErrorSample, &res.Throughput, &res.IOPS)
	if *k.Drop {
		if err := runUntimed(ctx, k.Count, k.Parallelism, "drop: ", func(ctx context.Context, i int64) (int64, time.Duration, error) {
			return 0, 0, t.del(ctx, c, t.key(k.Index, i))
		}); err != nil {
			return nil, err
		}
		res.Dropped = true
	}
	return res, nil
}
