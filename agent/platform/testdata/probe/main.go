// Command probe is a Lambda custom runtime that the platform's Runtime API tests
// (runtime_test.go) deploy: each invocation's payload names what it does, so one package
// covers the ways a third-party runtime behaves (aws-lambda-go exits after a panic, a streaming
// runtime reports errors in trailers, a runtime dies in the middle of its response body) and
// reports what it saw (the /next headers, its environment, its memory).
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

type request struct {
	Op    string `json:"op"`
	Bytes int    `json:"bytes"` // alloc, mapfile, tmpfile: how much
	Path  string `json:"path"`  // mapfile: the file to map
}

var api = os.Getenv("AWS_LAMBDA_RUNTIME_API")

// keep holds what alloc and mapfile took, so the pages stay in use.
var keep [][]byte

func main() {
	for {
		resp, err := http.Get("http://" + api + "/2018-06-01/runtime/invocation/next")
		if err != nil {
			fmt.Fprintln(os.Stderr, "next:", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var req request
		json.Unmarshal(body, &req)
		handle(id, req, resp.Header)
	}
}

func handle(id string, req request, h http.Header) {
	base := "http://" + api + "/2018-06-01/runtime/invocation/" + id
	switch req.Op {
	case "exit-after-answer": // answers, then exits as aws-lambda-go does after a panic
		post(base+"/error", `{"errorType":"Runtime.Panic","errorMessage":"panicked"}`)
		os.Exit(2)
	case "print-then-answer": // much output (more than a pipe holds), a last line, then the answer
		os.Stdout.Write([]byte(strings.Repeat("x", 255) + "\n"))
		for i := 0; i < 1024; i++ {
			os.Stdout.Write([]byte(strings.Repeat("y", 255) + "\n"))
		}
		os.Stdout.Write([]byte("last line before the answer\n"))
		post(base+"/response", `{"ok":true}`)
	case "exit-after-success":
		post(base+"/response", `{"ok":true}`)
		os.Exit(0)
	case "exit-later": // answers, then exits a moment later, while the next invocation waits for it
		post(base+"/response", `{"ok":true}`)
		time.Sleep(300 * time.Millisecond)
		os.Exit(0)
	case "headers":
		out := map[string]string{}
		for k := range h {
			out[k] = h.Get(k)
		}
		reply(base, out)
	case "env":
		out := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = v
		}
		reply(base, out)
	case "stream-ok":
		stream(base, "", "")
	case "stream-error": // a streaming response that fails midway: the error is in the trailers
		body := base64.StdEncoding.EncodeToString([]byte(`{"errorType":"StreamFailed","errorMessage":"broke midway"}`))
		stream(base, "StreamFailed", body)
	case "truncate": // declares a body longer than what it sends, then the connection goes
		truncate(id)
	case "alloc": // anonymous memory, touched
		b := make([]byte, req.Bytes)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
		reply(base, map[string]int{"rss_kb": rssKB()})
	case "mapfile": // a file mapped and read: file-backed pages of the process
		f, err := os.Open(req.Path)
		if err != nil {
			post(base+"/error", fmt.Sprintf(`{"errorType":"Open","errorMessage":%q}`, err.Error()))
			return
		}
		st, _ := f.Stat()
		m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
		f.Close()
		if err != nil {
			post(base+"/error", fmt.Sprintf(`{"errorType":"Mmap","errorMessage":%q}`, err.Error()))
			return
		}
		sum := 0
		for i := 0; i < len(m); i += 4096 {
			sum += int(m[i])
		}
		keep = append(keep, m)
		reply(base, map[string]int{"rss_kb": rssKB(), "sum": sum})
	case "tmpfile": // written to /tmp: page cache (and tmpfs pages) charged to the sandbox
		f, err := os.Create("/tmp/probe.dat")
		if err == nil {
			chunk := make([]byte, 1<<20)
			for n := 0; n < req.Bytes; n += len(chunk) {
				f.Write(chunk)
			}
			f.Close()
		}
		reply(base, map[string]int{"rss_kb": rssKB()})
	default:
		reply(base, map[string]string{"op": req.Op})
	}
}

func reply(base string, v any) {
	b, _ := json.Marshal(v)
	post(base+"/response", string(b))
}

func post(url, body string) {
	r, err := http.Post(url, "application/json", strings.NewReader(body))
	if err == nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}

// stream answers in Lambda's streaming mode: a chunked body, and the outcome in trailers.
func stream(base, errType, errBody string) {
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", base+"/response", pr)
	req.Header.Set("Lambda-Runtime-Function-Response-Mode", "streaming")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Trailer = http.Header{"Lambda-Runtime-Function-Error-Type": nil, "Lambda-Runtime-Function-Error-Body": nil}
	go func() {
		pw.Write([]byte(`{"part":1}`))
		if errType != "" {
			req.Trailer.Set("Lambda-Runtime-Function-Error-Type", errType)
			req.Trailer.Set("Lambda-Runtime-Function-Error-Body", errBody)
		} else {
			pw.Write([]byte(`{"part":2}`))
		}
		pw.Close()
	}()
	if r, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
}

// truncate sends a /response whose Content-Length promises more than it sends, then closes
// the connection, as a runtime killed in the middle of writing its answer would.
func truncate(id string) {
	c, err := net.Dial("tcp", api)
	if err != nil {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\nHost: %s\r\n", id, api)
	fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"cut\":")
	c.Write(b.Bytes())
	time.Sleep(50 * time.Millisecond)
	c.(*net.TCPConn).SetLinger(0) // a reset, not an orderly close
	c.Close()
}

func rssKB() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	return 0
}
