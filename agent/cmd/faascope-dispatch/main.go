// Command faascope-dispatch sends a burst's prepared HTTP requests at their scheduled instants,
// one pre-opened connection per member, and reports every member's timestamps and reply as JSON
// lines. The Python driver (src/faascope/driver/go_dispatch.py) prepares and signs the requests
// (SigV4 by the provider's boto3 signer) and records what this command reports; this command
// only connects, waits, writes, reads and times, so a member's send is one socket write at its
// instant and the driver's own work (parsing replies, recording) never delays a send.
//
// Protocol (one JSON object per line):
//
//	stdin   {"config": {...}}                          first line (see config)
//	        {"k": 0, "offset_ns": 0, "scheme": "http", "addr": "127.0.0.1:9001", "host": "...",
//	         "method": "POST", "target": "/path?q", "headers": [["K","V"]], "body": "<base64>"}
//	        {"go": true}                               the initial batch is complete: connect, start
//	        more requests (members due later, signed just before their time), then
//	        {"stop": "error_budget"|"interrupted"}     send nothing more (unsent members are reported)
//	        {"end": true}                              no more requests will come
//	        EOF before the end: the driver is gone, send nothing more and exit
//	stdout  {"ready": {"start_ns": …, "connected": n, "connect_failed": m, …}}  before any send
//	        {"k": …, "transport": "replied"|"never_sent"|"may_have_run", "send_ns": …, …}
//	        {"unsent": [k, …]}                          members a stop kept from being sent
//	        {"done": {"sent": n, "unsent": m, "stopped": "…", "max_rss_kb": …}}
//
// Timestamps are wall-clock Unix nanoseconds (CLOCK_REALTIME, Go's time.Now().UnixNano(), the
// clock of Python's time.time_ns()); intervals and waits use Go's monotonic clock. send_ns is
// read just before the request's one write(2).
//
// Classification: a member whose connection could not be opened, or whose pre-opened connection
// the server closed before the request was written and could not be re-opened, was never sent
// ("never_sent": no function can have run). Once a byte of the request has been written, any
// failure (reset, close, timeout) is "may_have_run": the driver records it and never resends it.
package main

import "os"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sink" {
		os.Exit(runSink(os.Args[2:]))
	}
	os.Exit(run(os.Stdin, os.Stdout))
}
