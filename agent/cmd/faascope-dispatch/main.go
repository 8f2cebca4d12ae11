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

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	// members in all (the driver may stream later ones after "go")
	Total int `json:"total"`
	// from "ready" to the schedule's start (offset 0)
	LeadNs int64 `json:"lead_ns"`
	// a connection is opened this long before its member's instant (members due later than
	// this after the start are connected during the burst, not before it)
	ConnectAheadNs   int64 `json:"connect_ahead_ns"`
	ConnectTimeoutNs int64 `json:"connect_timeout_ns"`
	ReadTimeoutNs    int64 `json:"read_timeout_ns"`
	// how many members (the first, in the order they were given) get a connection opened ahead;
	// the others connect at their instant; -1 or absent: all
	Preconnect *int `json:"preconnect"`
	// connections opened at once while pre-connecting
	DialParallel int `json:"dial_parallel"`
	// PEM file of extra trusted CAs (tests); the system's roots otherwise
	CAFile string `json:"ca_file"`
	// when not one pre-opened connection succeeded and every failure was a refusal or a timeout,
	// send nothing (the driver reports the endpoint unreachable)
	AbortIfUnreachable bool `json:"abort_if_unreachable"`
	// send the http (not https) members as streams of a few HTTP/2 connections without TLS (h2c,
	// prior knowledge), H2CStreams members per connection (default 1000), instead of one
	// HTTP/1.1 connection each: a burst of thousands then costs the server a few descriptors,
	// not one per member (the local platform serves h2c). The send is then the request's
	// hand-over to Go's HTTP/2 transport, which writes its frames under the connection's lock.
	H2C        bool `json:"h2c"`
	H2CStreams int  `json:"h2c_streams"`
}

type request struct {
	K        int         `json:"k"`
	OffsetNs int64       `json:"offset_ns"`
	Scheme   string      `json:"scheme"`
	Addr     string      `json:"addr"`
	Host     string      `json:"host"`
	Method   string      `json:"method"`
	Target   string      `json:"target"`
	Headers  [][2]string `json:"headers"`
	Body     []byte      `json:"body"`
	// a request that runs nothing (a Lambda DryRun invoke, an agent's health check), sent on the
	// connection when it is opened ahead, so that the server's own per-connection set-up (its
	// first request on a connection) is done before the burst, as a pooled client's would be
	Warm *request `json:"warm,omitempty"`
}

type message struct {
	Config *config `json:"config"`
	request
	Go   bool   `json:"go"`
	Stop string `json:"stop"`
	End  bool   `json:"end"`
}

type errInfo struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Stage   string `json:"stage"` // connect, write, read
}

type result struct {
	K           int         `json:"k"`
	Transport   string      `json:"transport"`
	ScheduledNs int64       `json:"scheduled_ns"`
	SendNs      int64       `json:"send_ns,omitempty"`
	FirstByteNs int64       `json:"first_byte_ns,omitempty"`
	HeadersNs   int64       `json:"headers_ns,omitempty"`
	EndNs       int64       `json:"end_ns,omitempty"`
	Status      int         `json:"status,omitempty"`
	Headers     [][2]string `json:"headers,omitempty"`
	Body        []byte      `json:"body,omitempty"`
	Error       *errInfo    `json:"error,omitempty"`
	Connection  string      `json:"connection"` // reused (opened before the instant), new, redialed
}

// conn is one member's connection and the goroutine that waits for its first byte: if that
// arrives (or the connection ends) before the request was written, the server closed it or
// spoke first, and the member re-connects before sending.
type conn struct {
	c           net.Conn
	br          *bufio.Reader
	peeked      chan struct{}
	firstByteNs int64
	peekErr     error
}

func newConn(c net.Conn, br *bufio.Reader) *conn {
	if br == nil {
		br = bufio.NewReaderSize(c, 8192)
	}
	cc := &conn{c: c, br: br, peeked: make(chan struct{})}
	go func() {
		_, err := cc.br.Peek(1)
		cc.firstByteNs = time.Now().UnixNano()
		cc.peekErr = err
		close(cc.peeked)
	}()
	return cc
}

func (cc *conn) dead() bool {
	select {
	case <-cc.peeked:
		return true
	default:
		return false
	}
}

type member struct {
	req  *request
	wire []byte
	at   time.Time
	pre  bool
	conn *conn
	// closed once the pre-connection attempt finished (conn set, or connErr)
	connected chan struct{}
	connErr   error
}

type dispatcher struct {
	cfg     config
	out     chan any
	start   time.Time
	stopCh  chan struct{}
	stopped atomic.Value // string
	stopMu  sync.Once
	tlsCfg  *tls.Config
	resolve sync.Map // addr -> *addrs
	dialSem chan struct{}
	h2c     []*http.Client // with config h2c: one connection each, member k uses h2c[k % len]

	// send windows: while one is open (around a group of instants), replies are read and timed
	// as they come but not reported, so the driver's work on them (and this process's JSON) does
	// not compete for the CPU with the receiving side while the burst is arriving
	winMu   sync.Mutex
	windows map[int64]*window

	mu       sync.Mutex
	members  map[int]*member
	resolved int
	sent     atomic.Int64
	unsent   []int
	allDone  chan struct{}
	doneOnce sync.Once
	ended    bool
	received int
}

type window struct {
	at    time.Time
	count int
}

// holdPerMember is how long the receiving side may need per member of a group sent at once
// (~0.05-0.1 ms each on this 2-core machine; measured in docs/concurrency.md)
const holdPerMember = 100 * time.Microsecond

// addWindow notes a member's instant (a group of members sharing it holds longer).
func (d *dispatcher) addWindow(at time.Time) {
	d.winMu.Lock()
	w := d.windows[at.UnixNano()]
	if w == nil {
		w = &window{at: at}
		d.windows[at.UnixNano()] = w
	}
	w.count++
	d.winMu.Unlock()
}

// holdUntil is when the send window open at “now“ closes (zero when none is open): from 5 ms
// before a group's instant to 20 ms + 0.1 ms per member after it.
func (d *dispatcher) holdUntil(now time.Time) time.Time {
	var until time.Time
	d.winMu.Lock()
	defer d.winMu.Unlock()
	for k, w := range d.windows {
		end := w.at.Add(20*time.Millisecond + time.Duration(w.count)*holdPerMember)
		if end.Before(now) {
			delete(d.windows, k)
			continue
		}
		if !now.Before(w.at.Add(-5*time.Millisecond)) && end.After(until) {
			until = end
		}
	}
	return until
}

type addrs struct {
	once sync.Once
	list []string
	err  error
	next atomic.Uint64
}

func (d *dispatcher) stop(reason string) {
	d.stopMu.Do(func() {
		d.stopped.Store(reason)
		close(d.stopCh)
	})
}

func (d *dispatcher) isStopped() bool {
	select {
	case <-d.stopCh:
		return true
	default:
		return false
	}
}

// address returns the next resolved address for host:port (resolved once, round robin over its
// addresses, as a pool spreads its connections).
func (d *dispatcher) address(addr string) (string, error) {
	v, _ := d.resolve.LoadOrStore(addr, &addrs{})
	a := v.(*addrs)
	a.once.Do(func() {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			a.err = err
			return
		}
		if ip := net.ParseIP(host); ip != nil {
			a.list = []string{addr}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(d.cfg.ConnectTimeoutNs))
		defer cancel()
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			a.err = err
			return
		}
		for _, ip := range ips { // IPv4 first: IPv6 is often unroutable where v4 works
			if ip.IP.To4() != nil {
				a.list = append(a.list, net.JoinHostPort(ip.IP.String(), port))
			}
		}
		for _, ip := range ips {
			if ip.IP.To4() == nil {
				a.list = append(a.list, net.JoinHostPort(ip.IP.String(), port))
			}
		}
		if len(a.list) == 0 {
			a.err = fmt.Errorf("no address for %s", host)
		}
	})
	if a.err != nil {
		return "", a.err
	}
	return a.list[int(a.next.Add(1)-1)%len(a.list)], nil
}

// dial opens a connection for “r“ (TCP, then TLS for https); with “warm“ it also sends r's
// warm-up request on it and reads the reply.
func (d *dispatcher) dial(r *request, warm bool) (*conn, error) {
	timeout := time.Duration(d.cfg.ConnectTimeoutNs)
	addr, err := d.address(r.Addr)
	if err != nil {
		return nil, err
	}
	dl := net.Dialer{Timeout: timeout}
	c, err := dl.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if r.Scheme == "https" {
		host, _, _ := net.SplitHostPort(r.Addr)
		cfg := d.tlsCfg.Clone()
		cfg.ServerName = host
		tc := tls.Client(c, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	var br *bufio.Reader
	if warm && r.Warm != nil {
		br = bufio.NewReaderSize(c, 8192)
		c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.Write(wire(r.Warm)); err != nil {
			c.Close()
			return nil, err
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: r.Warm.Method})
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err == nil && (resp.Close || resp.StatusCode >= 500) {
			err = fmt.Errorf("the warm-up request got %s", resp.Status)
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		c.SetDeadline(time.Time{})
	}
	return newConn(c, br), nil
}

// wire is the request as one write: request line, headers, Content-Length, body.
func wire(r *request) []byte {
	var b bytes.Buffer
	b.Grow(512 + len(r.Body))
	method := r.Method
	if method == "" {
		method = "POST"
	}
	b.WriteString(method + " " + r.Target + " HTTP/1.1\r\n")
	hasHost, hasLen := false, false
	for _, h := range r.Headers {
		switch strings.ToLower(h[0]) {
		case "host":
			hasHost = true
		case "content-length":
			hasLen = true
		}
	}
	if !hasHost {
		b.WriteString("Host: " + r.Host + "\r\n")
	}
	for _, h := range r.Headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	if !hasLen && (len(r.Body) > 0 || method == "POST" || method == "PUT") {
		b.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// connectError names a failure to connect as botocore names it (the driver's NEVER_SENT).
func connectError(err error) *errInfo {
	t := "EndpointConnectionError"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t = "ConnectTimeoutError"
	}
	return &errInfo{Type: t, Message: err.Error(), Stage: "connect"}
}

func (d *dispatcher) resolveMember(k int) {
	d.mu.Lock()
	d.resolved++
	d.checkDoneLocked()
	d.mu.Unlock()
}

func (d *dispatcher) checkDoneLocked() {
	if d.resolved >= d.cfg.Total {
		d.doneOnce.Do(func() { close(d.allDone) })
	}
}

func (d *dispatcher) emit(v any) { d.out <- v }

// flushed asks the writer to flush stdout and close the channel once it has.
type flushed chan struct{}

// run sends one member at its instant and reads its reply.
func (d *dispatcher) run(m *member) {
	defer d.resolveMember(m.req.K)
	res := &result{K: m.req.K, ScheduledNs: m.at.UnixNano()}
	if d.h2cFor(m.req) {
		d.runH2C(m, res)
		return
	}
	if m.pre {
		// connect ahead of the instant (members due later than connect_ahead after the start)
		if m.connected == nil {
			m.connected = make(chan struct{})
			ahead := time.Until(m.at.Add(-time.Duration(d.cfg.ConnectAheadNs)))
			if ahead > 0 {
				t := time.NewTimer(ahead)
				select {
				case <-t.C:
				case <-d.stopCh:
					t.Stop()
					d.markUnsent(m)
					return
				}
			}
			m.conn, m.connErr = d.dial(m.req, true)
			close(m.connected)
		}
		<-m.connected
	}
	if !d.waitForInstant(m) {
		if m.conn != nil {
			m.conn.c.Close()
		}
		return
	}
	cc := m.conn
	res.Connection = "reused"
	if cc == nil || cc.dead() {
		// not pre-opened, its pre-connection failed, or the server closed it before anything
		// was written: (re)connect now; nothing has been sent yet
		if cc != nil {
			cc.c.Close()
			res.Connection = "redialed"
		} else {
			res.Connection = "new"
		}
		var err error
		cc, err = d.dial(m.req, false) // at the instant: no warm-up
		if err != nil {
			res.Transport = "never_sent"
			res.Error = connectError(err)
			res.EndNs = time.Now().UnixNano()
			d.emit(res)
			return
		}
	}
	defer cc.c.Close()
	// the send time is taken as the request is handed to the kernel: on loopback the write
	// itself runs the receiving side's TCP stack, and the receiver may read it before the
	// write returns
	now := time.Now()
	res.SendNs = now.UnixNano()
	n, err := cc.c.Write(m.wire)
	if err != nil {
		res.EndNs = time.Now().UnixNano()
		if n == 0 {
			res.Transport = "never_sent"
			res.SendNs = 0
			res.Error = &errInfo{Type: "EndpointConnectionError", Stage: "write",
				Message: "the connection failed before any byte of the request was written: " + err.Error()}
		} else {
			res.Transport = "may_have_run"
			res.Error = &errInfo{Type: "MayHaveRun.ConnectionClosedError", Stage: "write",
				Message: fmt.Sprintf("the connection failed after %d of %d bytes were written: %v", n, len(m.wire), err)}
		}
		d.sent.Add(1)
		d.emit(res)
		return
	}
	d.sent.Add(1)
	if d.cfg.ReadTimeoutNs > 0 {
		cc.c.SetReadDeadline(now.Add(time.Duration(d.cfg.ReadTimeoutNs)))
	}
	<-cc.peeked
	if cc.peekErr != nil {
		d.readFailed(res, cc.peekErr)
		return
	}
	res.FirstByteNs = cc.firstByteNs
	resp, err := http.ReadResponse(cc.br, &http.Request{Method: m.req.Method})
	if err != nil {
		d.readFailed(res, err)
		return
	}
	res.HeadersNs = time.Now().UnixNano()
	d.readReply(res, resp)
}

func (d *dispatcher) readFailed(res *result, err error) {
	res.EndNs = time.Now().UnixNano()
	res.Transport = "may_have_run"
	t := "MayHaveRun.ConnectionClosedError"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t = "MayHaveRun.ReadTimeoutError"
	}
	res.Error = &errInfo{Type: t, Stage: "read",
		Message: "the request was sent and the reply failed: " + err.Error()}
	d.emit(res)
}

func (d *dispatcher) markUnsent(m *member) {
	d.mu.Lock()
	d.unsent = append(d.unsent, m.req.K)
	d.mu.Unlock()
}

func (d *dispatcher) newMember(r *request) *member {
	m := &member{req: r, wire: wire(r), at: d.start.Add(time.Duration(r.OffsetNs))}
	d.mu.Lock()
	d.members[r.K] = m
	d.received++
	m.pre = d.cfg.Preconnect == nil || *d.cfg.Preconnect < 0 || d.received <= *d.cfg.Preconnect
	d.mu.Unlock()
	return m
}

func fdCount() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func maxRSSKB() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Maxrss
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "sink" {
		os.Exit(runSink(os.Args[2:]))
	}
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(stdin io.Reader, stdout io.Writer) int {
	in := bufio.NewReaderSize(stdin, 1<<20)
	readMsg := func() (*message, error) {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		var m message
		if e := json.Unmarshal(line, &m); e != nil {
			return nil, fmt.Errorf("bad input line: %v", e)
		}
		return &m, nil
	}
	first, err := readMsg()
	if err != nil || first.Config == nil {
		fmt.Fprintln(os.Stderr, "faascope-dispatch: the first line must be {\"config\": …}:", err)
		return 2
	}
	d := &dispatcher{cfg: *first.Config, out: make(chan any, 4096), stopCh: make(chan struct{}),
		members: map[int]*member{}, allDone: make(chan struct{})}
	if d.cfg.ConnectTimeoutNs <= 0 {
		d.cfg.ConnectTimeoutNs = int64(10 * time.Second)
	}
	if d.cfg.DialParallel <= 0 {
		d.cfg.DialParallel = 128
	}
	if d.cfg.ConnectAheadNs <= 0 {
		d.cfg.ConnectAheadNs = int64(2 * time.Second)
	}
	d.dialSem = make(chan struct{}, d.cfg.DialParallel)
	d.tlsCfg = &tls.Config{NextProtos: []string{"http/1.1"}, ClientSessionCache: tls.NewLRUClientSessionCache(64)}
	if d.cfg.CAFile != "" {
		pem, err := os.ReadFile(d.cfg.CAFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faascope-dispatch: ca_file:", err)
			return 2
		}
		pool, _ := x509.SystemCertPool()
		if pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(pem)
		d.tlsCfg.RootCAs = pool
	}

	// the writer: results as JSON lines, flushed whenever the queue is empty
	bw := bufio.NewWriterSize(stdout, 1<<16)
	enc := json.NewEncoder(bw)
	writerDone := make(chan struct{})
	d.windows = map[int64]*window{}
	go func() {
		defer close(writerDone)
		var pending []any
		timer := time.NewTimer(time.Hour)
		write := func() {
			for _, v := range pending {
				enc.Encode(v) // an error: the driver is gone, keep draining
			}
			pending = pending[:0]
			bw.Flush()
		}
		for {
			select {
			case v, ok := <-d.out:
				if !ok {
					write()
					return
				}
				if f, isFlush := v.(flushed); isFlush {
					write()
					close(f)
					continue
				}
				pending = append(pending, v)
				if until := d.holdUntil(time.Now()); !until.IsZero() {
					timer.Reset(time.Until(until))
					continue
				}
				if len(d.out) == 0 {
					write()
				}
			case <-timer.C:
				if until := d.holdUntil(time.Now()); !until.IsZero() {
					timer.Reset(time.Until(until))
					continue
				}
				write()
			}
		}
	}()

	// the initial batch, until {"go": true}
	var initial []*request
	for {
		m, err := readMsg()
		if err != nil {
			fmt.Fprintln(os.Stderr, "faascope-dispatch: input ended before {\"go\": true}:", err)
			return 2
		}
		if m.Target != "" {
			r := m.request
			initial = append(initial, &r)
		}
		if m.Go {
			break
		}
	}
	// connect the members due soon, many at once, before the schedule starts
	t0 := time.Now()
	members := make([]*member, 0, len(initial))
	for _, r := range initial {
		members = append(members, d.newMember(r)) // d.start is zero: set below
	}
	var wg sync.WaitGroup
	var connected, failed atomic.Int64
	errs := map[string]int{}
	var errMu sync.Mutex
	for _, m := range members {
		if !m.pre || time.Duration(m.req.OffsetNs) >= time.Duration(d.cfg.ConnectAheadNs) || d.h2cFor(m.req) {
			continue
		}
		m.connected = make(chan struct{})
		wg.Add(1)
		d.dialSem <- struct{}{}
		go func(m *member) {
			defer wg.Done()
			defer func() { <-d.dialSem }()
			m.conn, m.connErr = d.dial(m.req, true)
			if m.connErr != nil {
				failed.Add(1)
				e := connectError(m.connErr)
				errMu.Lock()
				errs[e.Type]++
				errMu.Unlock()
			} else {
				connected.Add(1)
			}
			close(m.connected)
		}(m)
	}
	wg.Wait()
	if d.cfg.H2C {
		c, f := d.openH2C(initial, errs)
		connected.Add(c)
		failed.Add(f)
	}
	connectS := time.Since(t0).Seconds()
	ready := map[string]any{"connected": connected.Load(), "connect_failed": failed.Load(),
		"connect_errors": errs, "connect_s": connectS, "fds": fdCount(), "members": len(members)}
	if d.cfg.AbortIfUnreachable && connected.Load() == 0 && failed.Load() > 0 {
		ready["unreachable"] = true
		ready["start_ns"] = nil
		d.emit(map[string]any{"ready": ready})
		keys := make([]int, 0, len(members))
		for _, m := range members {
			keys = append(keys, m.req.K)
		}
		d.emit(map[string]any{"unsent": keys})
		d.emit(map[string]any{"done": map[string]any{"sent": 0, "unsent": len(keys), "stopped": "unreachable", "max_rss_kb": maxRSSKB()}})
		close(d.out)
		<-writerDone
		return 0
	}
	// no garbage collection while sending (a pause would smear the instants): the heap a burst
	// needs is small, and the memory limit still collects if it were not
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	d.start = time.Now().Add(time.Duration(d.cfg.LeadNs))
	ready["start_ns"] = d.start.UnixNano()
	d.emit(map[string]any{"ready": ready})
	// the driver has the start before anything can be sent: a member it has no record of after
	// a crash was sent only if its instant had passed
	f := make(flushed)
	d.emit(f)
	<-f
	sort.SliceStable(members, func(i, j int) bool { return members[i].req.OffsetNs < members[j].req.OffsetNs })
	for _, m := range members {
		m.at = d.start.Add(time.Duration(m.req.OffsetNs))
		d.addWindow(m.at)
	}
	for _, m := range members {
		go d.run(m)
	}
	// later requests, stop and end
	inputDone := make(chan struct{})
	driverGone := make(chan struct{})
	go func() {
		defer close(inputDone)
		for {
			msg, err := readMsg()
			if err != nil {
				d.mu.Lock()
				ended := d.ended
				d.mu.Unlock()
				if !ended {
					// EOF before the end: the driver is gone (killed), nobody records what
					// comes back; send nothing more and leave at once
					close(driverGone)
					d.stop("driver_gone")
					fmt.Fprintln(os.Stderr, "faascope-dispatch: the driver closed its pipe before the end; nothing more is sent")
				}
				return
			}
			switch {
			case msg.Stop != "":
				d.stop(msg.Stop)
				// members the driver has not handed over yet will never be sent
				d.mu.Lock()
				d.resolved += d.cfg.Total - d.received
				d.received = d.cfg.Total
				d.checkDoneLocked()
				d.mu.Unlock()
			case msg.End:
				d.mu.Lock()
				d.ended = true
				d.mu.Unlock()
			case msg.Target != "":
				if d.isStopped() {
					continue
				}
				r := msg.request
				m := d.newMember(&r)
				d.addWindow(m.at)
				go d.run(m)
			}
		}
	}()
	if d.cfg.Total <= 0 {
		d.doneOnce.Do(func() { close(d.allDone) })
	} else {
		d.mu.Lock()
		d.checkDoneLocked()
		d.mu.Unlock()
	}
	select {
	case <-d.allDone:
	case <-driverGone:
	}
	select {
	case <-driverGone:
		return 3 // nobody records what comes back: leave at once, in-flight replies unread
	default:
	}
	debug.SetGCPercent(100)
	d.mu.Lock()
	unsent := append([]int(nil), d.unsent...)
	d.mu.Unlock()
	if len(unsent) > 0 {
		sort.Ints(unsent)
		d.emit(map[string]any{"unsent": unsent})
	}
	stopped, _ := d.stopped.Load().(string)
	d.emit(map[string]any{"done": map[string]any{"sent": d.sent.Load(), "unsent": len(unsent),
		"stopped": stopped, "max_rss_kb": maxRSSKB(), "fds": fdCount()}})
	close(d.out)
	<-writerDone
	return 0
}

// h2cFor says whether r goes as an HTTP/2 stream (config h2c, an http URL).
func (d *dispatcher) h2cFor(r *request) bool { return d.cfg.H2C && r.Scheme != "https" }

// openH2C makes the h2c clients, one connection each, enough for the members at
// H2CStreams per connection, and opens every connection ahead with a warm-up request (the
// first h2c member's Warm; without one the connections open at the first send). It returns
// how many connections opened and failed.
func (d *dispatcher) openH2C(initial []*request, errs map[string]int) (opened, failedN int64) {
	per := d.cfg.H2CStreams
	if per <= 0 {
		per = 1000
	}
	var first *request
	n := 0
	for _, r := range initial {
		if d.h2cFor(r) {
			if first == nil {
				first = r
			}
			n++
		}
	}
	if total := d.cfg.Total; total > n {
		n = total
	}
	conns := (n + per - 1) / per
	if conns < 1 {
		conns = 1
	}
	for i := 0; i < conns; i++ {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: p, DisableCompression: true, MaxIdleConnsPerHost: 1,
			HTTP2: &http.HTTP2Config{MaxConcurrentStreams: per}}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			a, err := d.address(addr)
			if err != nil {
				return nil, err
			}
			dl := net.Dialer{Timeout: time.Duration(d.cfg.ConnectTimeoutNs)}
			return dl.DialContext(ctx, "tcp", a)
		}
		d.h2c = append(d.h2c, &http.Client{Transport: tr, Timeout: time.Duration(d.cfg.ReadTimeoutNs)})
	}
	if first == nil || first.Warm == nil {
		return 0, 0
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range d.h2c {
		wg.Add(1)
		go func(c *http.Client) {
			defer wg.Done()
			resp, err := c.Do(h2cRequest(first.Warm, first))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 500 {
					err = fmt.Errorf("the warm-up request got %s", resp.Status)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failedN++
				errs[connectError(err).Type]++
			} else {
				opened++
			}
		}(c)
	}
	wg.Wait()
	return opened, failedN
}

// h2cRequest is r as a request for Go's HTTP client (addressing as member's when r is a warm-up).
func h2cRequest(r, member *request) *http.Request {
	addr, host := r.Addr, r.Host
	if addr == "" {
		addr, host = member.Addr, member.Host
	}
	method := r.Method
	if method == "" {
		method = "POST"
	}
	req, _ := http.NewRequest(method, "http://"+addr+r.Target, bytes.NewReader(r.Body))
	if req == nil {
		req, _ = http.NewRequest(method, "http://"+addr+"/", nil)
	}
	req.Host = host
	for _, h := range r.Headers {
		switch strings.ToLower(h[0]) {
		case "host":
			req.Host = h[1]
		case "content-length", "connection", "transfer-encoding":
		default:
			req.Header.Add(h[0], h[1])
		}
	}
	return req
}

// waitForInstant waits until the member's instant; false (the member marked unsent) when the
// dispatch is stopped before or at it.
func (d *dispatcher) waitForInstant(m *member) bool {
	if wait := time.Until(m.at); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-d.stopCh:
			t.Stop()
			d.markUnsent(m)
			return false
		}
	}
	if d.isStopped() {
		d.markUnsent(m)
		return false
	}
	return true
}

// runH2C sends one member as a stream of its h2c connection at its instant and reads its reply.
func (d *dispatcher) runH2C(m *member, res *result) {
	if !d.waitForInstant(m) {
		return
	}
	c := d.h2c[m.req.K%len(d.h2c)]
	req := h2cRequest(m.req, m.req)
	res.Connection = "h2c"
	res.SendNs = time.Now().UnixNano()
	d.sent.Add(1)
	resp, err := c.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" { // no connection: nothing was written
			res.Transport, res.SendNs = "never_sent", 0
			res.Error = connectError(err)
			res.EndNs = time.Now().UnixNano()
			d.sent.Add(-1)
			d.emit(res)
			return
		}
		d.readFailed(res, err)
		return
	}
	res.HeadersNs = time.Now().UnixNano()
	res.FirstByteNs = res.HeadersNs
	d.readReply(res, resp)
}

// readReply records a reply whose headers arrived at res.HeadersNs: status, headers, body and
// the time its last byte was read, then emits the record.
func (d *dispatcher) readReply(res *result, resp *http.Response) {
	res.Status = resp.StatusCode
	for k, vs := range resp.Header {
		for _, v := range vs {
			res.Headers = append(res.Headers, [2]string{k, v})
		}
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		d.readFailed(res, err)
		return
	}
	res.EndNs = time.Now().UnixNano()
	res.Body = body
	res.Transport = "replied"
	d.emit(res)
}
