// Command faascope-agent is the function faascope deploys and measures. With
// AWS_LAMBDA_RUNTIME_API set it is a Lambda custom runtime (`bootstrap`); otherwise it serves
// HTTP on $PORT (default 8080) for Cloud Run and other HTTP platforms. `--once PAYLOAD` runs one
// invocation and prints the response, for benchmarks and debugging.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/faascope/faascope/agent/runtime"
	"github.com/faascope/faascope/agent/workloads"
)

func main() {
	once := flag.String("once", "", "run one invocation with this JSON payload (\"-\" reads stdin), print the response and exit: 0 ok, 2 invalid request, 1 other failure")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	newHandler := func() (*runtime.Handler, error) { return runtime.NewHandler(os.Stderr) }

	if *once != "" {
		os.Exit(runOnce(ctx, *once, newHandler))
	}
	var err error
	if api := os.Getenv("AWS_LAMBDA_RUNTIME_API"); api != "" {
		err = runtime.RunLambda(ctx, api, newHandler, os.Stderr)
	} else {
		var h *runtime.Handler
		if h, err = newHandler(); err == nil {
			port := os.Getenv("PORT")
			if port == "" {
				port = "8080"
			}
			fmt.Fprintf(os.Stderr, "faascope-agent: listening on :%s\n", port)
			err = runtime.ServeHTTP(ctx, ":"+port, h)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "faascope-agent: %v\n", err)
		os.Exit(1)
	}
}

func runOnce(ctx context.Context, payload string, newHandler func() (*runtime.Handler, error)) int {
	received := time.Now()
	body := []byte(payload)
	if payload == "-" {
		var err error
		if body, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "faascope-agent: reading stdin: %v\n", err)
			return 1
		}
	}
	h, err := newHandler()
	if err != nil {
		fmt.Fprintf(os.Stderr, "faascope-agent: %v\n", err)
		return 1
	}
	_, resp := h.Invoke(ctx, received, body)
	out, err := json.Marshal(resp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "faascope-agent: %v\n", err)
		return 1
	}
	fmt.Println(string(out))
	switch {
	case resp.OK:
		return 0
	case resp.Error.Type == workloads.InvalidRequest:
		return 2
	}
	return 1
}
