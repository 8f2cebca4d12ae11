package workloads

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	// MaxChainLength bounds producer → consumer chains.
	MaxChainLength = 64
	// MaxInlinePayload keeps an inline payload and its envelope under Lambda's 6 MiB
	// request limit (6,291,456 bytes).
	MaxInlinePayload = 6<<20 - 64<<10
	// MaxStoredPayload bounds payloads passed through storage.
	MaxStoredPayload = 1 << 30
)

// Transfer passes a payload along a chain of chain_length invocations (producer → consumer →
// ...), each hop invoking the next through the Lambda Invoke API (synchronously, so the first
// hop's response holds every hop's timestamps): inline in the invocation payload, or through
// storage ("object": S3; "kv": Redis or DynamoDB), the next hop receiving only the key.
//
// The next function is "function" (default: this one, $AWS_LAMBDA_FUNCTION_NAME) at
// lambda_endpoint (default $AWS_ENDPOINT_URL_LAMBDA, $AWS_ENDPOINT_URL, else AWS's regional
// endpoint). On AWS the function's role needs lambda:InvokeFunction on it; on the local
// platform the platform's port must be exposed to the sandbox (tag faascope:expose), since a
// sandbox reaches nothing else. hop, session, payload, key and invoked_ns are set by the
// previous hop; a user starts a chain without them.
type Transfer struct {
	Kind              string `json:"kind"`
	Via               string `json:"via"`
	ChainLength       int    `json:"-"`
	ChainLengthIn     *int   `json:"chain_length"`
	PayloadSize       int64  `json:"payload_size"`
	Function          string `json:"function"`
	LambdaEndpoint    string `json:"lambda_endpoint"`
	InvokeTimeoutMs   int64  `json:"-"`
	InvokeTimeoutMsIn *int64 `json:"invoke_timeout_ms"`
	// storage, for via object / kv (same meaning as in object and kv)
	BlobParams
	// set by the previous hop
	Hop       int    `json:"hop"`
	Session   string `json:"session"`
	Payload   string `json:"payload"`
	Key       string `json:"key"`
	InvokedNs int64  `json:"invoked_ns"`

	s3t s3Target
	kvt kvTarget
	lam awsEndpoint
}

// TransferResult is the "workload" object of a transfer response; hops[0] is this invocation.
type TransferResult struct {
	Common
	Via         string      `json:"via"`
	ChainLength int         `json:"chain_length"`
	PayloadSize int64       `json:"payload_size"`
	Session     string      `json:"session"`
	Function    string      `json:"function"`
	Hops        []HopRecord `json:"hops"`
}

// HopRecord is one invocation of the chain, timestamps in Unix ns of that invocation's clock.
// For hops after the first, instance_id, cold and received_ns come from the response envelope
// their caller received; the first hop's are in the top-level envelope.
type HopRecord struct {
	Hop          int     `json:"hop"`
	InstanceID   *string `json:"instance_id"`
	Cold         *bool   `json:"cold"`
	ReceivedNs   *int64  `json:"received_ns"`
	StartNs      int64   `json:"start_ns"`
	PayloadBytes int64   `json:"payload_bytes"`
	ReadS        float64 `json:"read_s"`
	WriteS       float64 `json:"write_s"`
	InvokeNs     *int64  `json:"invoke_ns"`
	ReturnNs     *int64  `json:"return_ns"`
	EndNs        int64   `json:"end_ns"`
	// TransferS is the time from the previous hop starting to send the payload (its write to
	// storage, or its invoke) to this hop holding it (after its read): null on the first hop.
	TransferS *float64 `json:"transfer_s"`
}

func (t *Transfer) Validate() error {
	if err := oneOf("workload.via", &t.Via, "inline", "inline", "object", "kv"); err != nil {
		return err
	}
	t.ChainLength = orDefault(t.ChainLengthIn, 2)
	if t.ChainLength < 1 || t.ChainLength > MaxChainLength {
		return Invalid("workload.chain_length", "must be between 1 and %d (got %d)", MaxChainLength, t.ChainLength)
	}
	if t.Hop < 0 || t.Hop >= t.ChainLength {
		return Invalid("workload.hop", "must be between 0 and chain_length-1 (got %d)", t.Hop)
	}
	limit := int64(MaxStoredPayload)
	if t.Via == "inline" {
		limit = MaxInlinePayload
	}
	if t.Via == "kv" {
		limit = MaxItemSize
	}
	if t.PayloadSize < 0 || t.PayloadSize > limit {
		return Invalid("workload.payload_size", "must be between 0 and %d bytes with via %q (got %d)", limit, t.Via, t.PayloadSize)
	}
	if t.Function == "" {
		t.Function = firstEnv("AWS_LAMBDA_FUNCTION_NAME")
	}
	if t.Function == "" && t.ChainLength > 1 {
		return Invalid("workload.function", "required outside Lambda (no AWS_LAMBDA_FUNCTION_NAME): the function to invoke next")
	}
	if strings.ContainsAny(t.Function, "/?#% ") {
		return Invalid("workload.function", "not a function name (got %q)", t.Function)
	}
	t.InvokeTimeoutMs = orDefault(t.InvokeTimeoutMsIn, 300000)
	if t.InvokeTimeoutMs < 1 || t.InvokeTimeoutMs > 900000 {
		return Invalid("workload.invoke_timeout_ms", "must be between 1 and 900000 (got %d)", t.InvokeTimeoutMs)
	}
	if t.Hop == 0 && (t.Payload != "" || t.Key != "" || t.InvokedNs != 0) {
		return Invalid("workload.hop", "payload, key and invoked_ns are set by the previous hop (hop >= 1)")
	}
	if t.Hop > 0 && t.Via == "inline" && int64(len(t.Payload)) != t.PayloadSize {
		return Invalid("workload.payload", "has %d bytes, payload_size says %d", len(t.Payload), t.PayloadSize)
	}
	if t.Hop > 0 && t.Via != "inline" && t.Key == "" {
		return Invalid("workload.key", "required at hop >= 1 with via %q", t.Via)
	}
	t.MaxAttempts = orDefault(t.MaxAttemptsIn, 1)
	var err error
	switch t.Via {
	case "object":
		if t.Backend != "" || t.Table != "" {
			return Invalid("workload.backend", "only with via \"kv\"")
		}
		t.s3t, err = newS3Target(t.Endpoint, t.Region, t.Bucket, t.Prefix, t.PathStyle, t.AccessKeyID, t.SecretAccessKey,
			t.SessionToken, "", t.MaxAttempts, "", DefaultMaxBackoffMs, 0)
	case "kv":
		if t.Bucket != "" || t.PathStyle != nil {
			return Invalid("workload.bucket", "only with via \"object\"")
		}
		t.kvt, err = newKVTarget(t.Backend, t.Endpoint, t.Table, t.Prefix, t.Region, t.AccessKeyID, t.SecretAccessKey,
			t.SessionToken, false, t.MaxAttempts, "", DefaultMaxBackoffMs, 0)
		t.Backend = t.kvt.backend
	default:
		if t.Backend != "" || t.Endpoint != "" || t.Bucket != "" || t.Table != "" || t.Prefix != "" || t.PathStyle != nil || t.MaxAttemptsIn != nil {
			return Invalid("workload.via", "\"inline\" takes no storage parameters")
		}
	}
	if err != nil {
		return err
	}
	// Credentials for invoking: the request's, else the function's role from the environment.
	t.lam, err = resolveAWS(t.LambdaEndpoint, t.Region, t.AccessKeyID, t.SecretAccessKey, t.SessionToken, "AWS_ENDPOINT_URL_LAMBDA")
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Message = strings.Replace(e.Message, "workload.endpoint", "workload.lambda_endpoint", 1)
		}
		return err
	}
	if t.lam.Endpoint == "" {
		t.lam.Endpoint = "https://lambda." + t.lam.Region + ".amazonaws.com"
	}
	return nil
}

func (t *Transfer) storageKey(hop int) string {
	return fmt.Sprintf("transfer/%s/%d", t.Session, hop)
}

func (t *Transfer) Run(ctx context.Context) (any, error) {
	if t.lam.Endpoint == "" {
		if err := t.Validate(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	self := HopRecord{Hop: t.Hop, StartNs: start.UnixNano()}
	if t.Session == "" {
		b := make([]byte, 8)
		if _, err := rand.Read(b); err != nil {
			return nil, &Error{Type: Internal, Message: "crypto/rand: " + err.Error()}
		}
		t.Session = hex.EncodeToString(b)
	}
	res := TransferResult{Common: Common{Kind: "transfer"}, Via: t.Via, ChainLength: t.ChainLength,
		PayloadSize: t.PayloadSize, Session: t.Session, Function: t.Function}

	// Receive.
	var payload []byte
	switch {
	case t.Hop == 0:
		payload = makePayload(t.PayloadSize)
	case t.Via == "inline":
		payload = []byte(t.Payload)
	default:
		r0 := time.Now()
		var err error
		payload, err = t.blobs().get(ctx, t.Key)
		self.ReadS = time.Since(r0).Seconds()
		if err != nil {
			return nil, prefixError(fmt.Sprintf("hop %d: ", t.Hop), err)
		}
		if int64(len(payload)) != t.PayloadSize {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("hop %d: %s has %d bytes, payload_size says %d", t.Hop, t.Key, len(payload), t.PayloadSize)}
		}
		_ = t.blobs().del(ctx, t.Key) // consumed; not timed
	}
	if t.Hop > 0 {
		self.PayloadBytes = int64(len(payload))
		ts := time.Duration(self.StartNs-t.InvokedNs).Seconds() + self.ReadS
		self.TransferS = &ts
	}
	hops := []HopRecord{}

	// Pass on.
	if t.Hop+1 < t.ChainLength {
		next := *t
		next.Hop = t.Hop + 1
		next.Payload, next.Key = "", ""
		sendStart := time.Now()
		if t.Via == "inline" {
			next.Payload = string(payload)
		} else {
			next.Key = t.storageKey(next.Hop)
			if err := t.blobs().put(ctx, next.Key, payload); err != nil {
				return nil, prefixError(fmt.Sprintf("hop %d: ", t.Hop), err)
			}
			self.WriteS = time.Since(sendStart).Seconds()
		}
		// The next hop's transfer_s starts when this hop started sending (write included).
		next.InvokedNs = sendStart.UnixNano()
		inv := time.Now().UnixNano()
		self.InvokeNs = &inv
		downstream, err := t.invoke(ctx, &next)
		ret := time.Now().UnixNano()
		self.ReturnNs = &ret
		if err != nil {
			if t.Via != "inline" {
				_ = t.blobs().del(context.WithoutCancel(ctx), next.Key)
			}
			return nil, prefixError(fmt.Sprintf("hop %d -> %d: ", t.Hop, next.Hop), err)
		}
		hops = downstream
	}
	self.EndNs = time.Now().UnixNano()
	res.Hops = append([]HopRecord{self}, hops...)
	res.ElapsedS = time.Since(start).Seconds()
	res.Ops = int64(len(res.Hops))
	for _, h := range res.Hops {
		res.Bytes += h.PayloadBytes
	}
	return res, nil
}

// makePayload is size bytes of printable ASCII (so JSON carries it without escaping).
func makePayload(size int64) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, size)
	for i := range b {
		b[i] = alphabet[i%len(alphabet)]
	}
	return b
}

// blobs is the storage the payload passes through (via "object" or "kv"), keys under its
// prefix, as app keeps its input and output.
func (t *Transfer) blobs() blobStore {
	if t.Via == "object" {
		c, _ := t.s3t.client(1)
		return &s3Blobs{t: t.s3t, c: c}
	}
	c, _ := t.kvt.client(1)
	return &kvBlobs{t: t.kvt, c: c}
}

// envelope is the part of the next hop's agent response this hop reads.
type envelope struct {
	OK       bool `json:"ok"`
	Cold     bool `json:"cold"`
	Instance struct {
		ID string `json:"id"`
	} `json:"instance"`
	Timings struct {
		ReceivedNs int64 `json:"received_ns"`
	} `json:"timings"`
	Workload *TransferResult `json:"workload"`
	Error    *Error          `json:"error"`
}

var invokeClient = &http.Client{}

// invoke calls the Lambda Invoke API (RequestResponse), SigV4-signed when credentials exist.
func (t *Transfer) invoke(ctx context.Context, next *Transfer) ([]HopRecord, error) {
	body, err := json.Marshal(map[string]any{"workload": next.request()})
	if err != nil {
		return nil, &Error{Type: Internal, Message: err.Error()}
	}
	u := strings.TrimSuffix(t.lam.Endpoint, "/") + "/2015-03-31/functions/" + url.PathEscape(t.Function) + "/invocations"
	ctx, cancel := context.WithTimeout(ctx, time.Duration(t.InvokeTimeoutMs)*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Type: Internal, Message: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Invocation-Type", "RequestResponse")
	if t.lam.CredentialsSource != "anonymous" {
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: t.lam.AccessKeyID, SecretAccessKey: t.lam.SecretAccessKey, SessionToken: t.lam.SessionToken}
		if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "lambda", t.lam.Region, time.Now()); err != nil {
			return nil, &Error{Type: Internal, Message: "signing the invoke: " + err.Error()}
		}
	}
	resp, err := invokeClient.Do(req)
	if err != nil {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("invoke %s: %v", t.Function, err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("invoke %s: reading the response: %v", t.Function, err)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("invoke %s: HTTP %d %s: %.300s", t.Function, resp.StatusCode,
			resp.Header.Get("X-Amzn-ErrorType"), raw)}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("invoke %s: not an agent response (%s): %.300s", t.Function,
			resp.Header.Get("X-Amz-Function-Error"), raw)}
	}
	if !env.OK || env.Workload == nil || len(env.Workload.Hops) == 0 {
		msg := "no workload in the response"
		if env.Error != nil {
			msg = env.Error.Type + ": " + env.Error.Message
		}
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("next hop failed: %s", msg)}
	}
	hops := env.Workload.Hops
	id, cold, recv := env.Instance.ID, env.Cold, env.Timings.ReceivedNs
	hops[0].InstanceID, hops[0].Cold, hops[0].ReceivedNs = &id, &cold, &recv
	return hops, nil
}

// request is the next hop's workload object: only the fields that were set, so the strict
// decoder on the other side sees the same request a user could have written.
func (t *Transfer) request() map[string]any {
	m := map[string]any{"kind": "transfer", "via": t.Via, "chain_length": t.ChainLength, "payload_size": t.PayloadSize,
		"function": t.Function, "hop": t.Hop, "session": t.Session, "invoked_ns": t.InvokedNs,
		"invoke_timeout_ms": t.InvokeTimeoutMs}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("lambda_endpoint", t.LambdaEndpoint)
	set("payload", t.Payload)
	set("key", t.Key)
	set("backend", t.Backend)
	set("endpoint", t.Endpoint)
	set("bucket", t.Bucket)
	set("table", t.Table)
	set("prefix", t.Prefix)
	set("region", t.Region)
	set("access_key_id", t.AccessKeyID)
	set("secret_access_key", t.SecretAccessKey)
	set("session_token", t.SessionToken)
	if t.PathStyle != nil {
		m["path_style"] = *t.PathStyle
	}
	if t.MaxAttemptsIn != nil {
		m["max_attempts"] = t.MaxAttempts
	}
	return m
}
