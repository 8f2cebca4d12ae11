package workloads

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Throttling and retries are counted from the SDK's retry layer. Real services throttle only
// under load, so these tests answer like S3 and DynamoDB do when they throttle: the first
// attempt of every request is refused, the retry succeeds.

func TestObjectCountsSlowDownRetries(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, "/bkt/faascope/0/") {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, 400)
			return
		}
		if calls.Add(1)%2 == 1 {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		w.Header().Set("ETag", `"x"`)
	}))
	defer srv.Close()
	o := &Object{Op: "put", Bucket: "bkt", Endpoint: srv.URL, ObjectSize: 100, CountIn: ptr(int64(5)),
		RetryParams: RetryParams{MaxAttemptsIn: ptr(3), MaxBackoffMsIn: ptr(int64(1))},
		AWSAccess:   AWSAccess{AccessKeyID: "AKID", SecretAccessKey: "s"}}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := o.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := out.(ObjectResult)
	want := RequestCounts{OK: 5, Failed: 0, Attempts: 10, Retries: 5, Throttles: 5}
	if r.Requests != want || r.Retry.Mode != "standard" || !r.PathStyle {
		t.Errorf("requests %+v, want %+v (retry %+v)", r.Requests, want, r.Retry)
	}
	// Without retries (the default) the first SlowDown fails the run, named as a throttle.
	o = &Object{Op: "put", Bucket: "bkt", Endpoint: srv.URL, ObjectSize: 100,
		AWSAccess: AWSAccess{AccessKeyID: "AKID", SecretAccessKey: "s"}}
	_ = o.Validate()
	calls.Store(0)
	if _, err := o.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "throttled: SlowDown") {
		t.Errorf("no retries: %v", err)
	}
}

func TestKVDynamoDBRequestsAndThrottles(t *testing.T) {
	var calls atomic.Int64
	items := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Header.Get("X-Amz-Target")
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if body["TableName"] != "tbl" {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"table"}`)
			return
		}
		if calls.Add(1)%2 == 1 {
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`)
			return
		}
		switch target {
		case "DynamoDB_20120810.PutItem":
			item := body["Item"].(map[string]any)
			items[item["pk"].(map[string]any)["S"].(string)] = item["v"].(map[string]any)["B"].(string)
			_, _ = io.WriteString(w, `{}`)
		case "DynamoDB_20120810.GetItem":
			k := body["Key"].(map[string]any)["pk"].(map[string]any)["S"].(string)
			v, _ := json.Marshal(map[string]any{"Item": map[string]any{"pk": map[string]string{"S": k}, "v": map[string]string{"B": items[k]}}})
			_, _ = w.Write(v)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	for _, op := range []string{"put", "get"} {
		k := &KV{Backend: "dynamodb", Op: op, Table: "tbl", Endpoint: srv.URL, ItemSize: 64, CountIn: ptr(int64(4)),
			RetryParams: RetryParams{MaxAttemptsIn: ptr(2), MaxBackoffMsIn: ptr(int64(1))},
			AWSAccess:   AWSAccess{AccessKeyID: "AKID", SecretAccessKey: "s"},
			Prepare:     ptr(false), ConsistentRead: op == "get"}
		if err := k.Validate(); err != nil {
			t.Fatal(err)
		}
		out, err := k.Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		r := out.(KVResult)
		want := RequestCounts{OK: 4, Attempts: 8, Retries: 4, Throttles: 4}
		if r.Requests != want || r.Bytes != 4*64 || *r.CredentialsSource != "request" || *r.Table != "tbl" {
			t.Errorf("%s: %+v", op, r)
		}
	}
}
