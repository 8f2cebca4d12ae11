package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// runSink is `faascope-dispatch sink`: a stand-in Lambda Invoke endpoint for benchmarks and
// tests of the dispatch path (bench/dispatch_spread.py). It answers every invocation at once with
// a noop agent reply whose received_ns is when the request's headers had been read, a DryRun with
// 204, and GET /arrivals with (and then forgets) the arrival times so far. Being Go, it reads
// requests on every core, so its arrival spread shows the sender and the loopback stack rather
// than a receiver's per-request cost.
func runSink(args []string) int {
	fs := flag.NewFlagSet("faascope-dispatch sink", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "host:port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sink:", err)
		return 1
	}
	var mu sync.Mutex
	var arrivals []int64
	mux := http.NewServeMux()
	mux.HandleFunc("/arrivals", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		out := arrivals
		arrivals = nil
		mu.Unlock()
		if out == nil {
			out = []int64{}
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t := time.Now().UnixNano()
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Amz-Invocation-Type") == "DryRun" || !strings.HasSuffix(r.URL.Path, "/invocations") {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mu.Lock()
		arrivals = append(arrivals, t)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"cold":false,"instance":{"id":"sink","sandbox":"/sink","boot_id":"sink"},`+
			`"timings":{"received_ns":%d,"workload_start_ns":%d,"workload_end_ns":%d},`+
			`"workload":{"kind":"noop","elapsed_s":0,"bytes":0,"ops":0},"error":null}`, t, t, t)
	})
	fmt.Printf("http://%s\n", ln.Addr())
	os.Stdout.Sync()
	return func() int {
		if err := http.Serve(ln, mux); err != nil {
			fmt.Fprintln(os.Stderr, "sink:", err)
			return 1
		}
		return 0
	}()
}
