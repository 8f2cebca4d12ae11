// A conformance function built with AWS's aws-lambda-go, nothing of faascope's in it. The
// payload's "op" picks what it does (see tests/conformance/README.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Op      string   `json:"op"`
	Message string   `json:"message"`
	Seconds float64  `json:"seconds"`
	Line    string   `json:"line"`
	Env     []string `json:"env"`
}

func handle(ctx context.Context, raw map[string]any) (map[string]any, error) {
	var req request
	if v, ok := raw["op"].(string); ok {
		req.Op = v
	}
	if v, ok := raw["message"].(string); ok {
		req.Message = v
	}
	if v, ok := raw["seconds"].(float64); ok {
		req.Seconds = v
	}
	if v, ok := raw["line"].(string); ok {
		req.Line = v
	}
	if v, ok := raw["env"].([]any); ok {
		for _, n := range v {
			if s, ok := n.(string); ok {
				req.Env = append(req.Env, s)
			}
		}
	}
	switch req.Op {
	case "error":
		return nil, errors.New(req.Message)
	case "panic":
		panic(req.Message)
	case "exit":
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Duration(req.Seconds * float64(time.Second)))
		return map[string]any{"slept": req.Seconds}, nil
	case "read": // a file's content, or null: what a layer put under /opt, say
		b, err := os.ReadFile(req.Line)
		if err != nil {
			return map[string]any{"content": nil, "error": err.Error()}, nil
		}
		return map[string]any{"content": string(b)}, nil
	case "print":
		fmt.Println(req.Line)
		return map[string]any{"printed": true}, nil
	}
	lc, _ := lambdacontext.FromContext(ctx)
	deadline, _ := ctx.Deadline()
	env := map[string]any{}
	for _, n := range req.Env {
		if v, ok := os.LookupEnv(n); ok {
			env[n] = v
		} else {
			env[n] = nil
		}
	}
	out := map[string]any{"payload": raw, "env": env, "rss_kb": rssKB()}
	c := map[string]any{"remaining_ms": time.Until(deadline).Milliseconds(), "client_context": nil, "identity": nil}
	if lc != nil {
		c["request_id"] = lc.AwsRequestID
		c["invoked_function_arn"] = lc.InvokedFunctionArn
		cc := lc.ClientContext
		if cc.Custom != nil || cc.Env != nil || cc.Client.InstallationID != "" || cc.Client.AppTitle != "" {
			c["client_context"] = map[string]any{"custom": cc.Custom, "env": cc.Env,
				"client": map[string]any{"installation_id": cc.Client.InstallationID, "app_title": cc.Client.AppTitle}}
		}
		if lc.Identity.CognitoIdentityID != "" || lc.Identity.CognitoIdentityPoolID != "" {
			c["identity"] = map[string]any{"identity_id": lc.Identity.CognitoIdentityID,
				"identity_pool_id": lc.Identity.CognitoIdentityPoolID}
		}
	}
	c["trace_id"] = os.Getenv("_X_AMZN_TRACE_ID")
	if v := ctx.Value("x-amzn-trace-id"); v != nil {
		c["trace_id"] = v
	}
	out["context"] = c
	return out, nil
}

// rssKB is the process's resident set (VmRSS of /proc/self/status) in KiB.
func rssKB() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return -1
}

func main() {
	if os.Getenv("FAIL_INIT") != "" {
		log.Fatal("init failed on purpose (FAIL_INIT)")
	}
	lambda.Start(handle)
}
