package workloads

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// MaxNetworkSamples bounds a response's time series (duration_ms / interval_ms).
	MaxNetworkSamples = 100_000
	// MaxConnections bounds the TCP connections of one run.
	MaxConnections = 256
	// SinkProtocolVersion is the faascope sink protocol spoken here (docs/storage.md).
	SinkProtocolVersion = 1
)

// Network moves bytes over TCP between the function and a sink (faascope's, started by
// `faascope standins`) with one or more connections, and returns the bytes per interval of
// interval_ms, as the receiver saw them: the agent samples what it receives ("in", the sink
// sends), the sink samples what it receives ("out") and returns its series when the upload
// ends. A sender's clock would lie: its writes return as soon as socket buffers (several MiB)
// take the data, so a token bucket's burst would look larger than it is.
type Network struct {
	Kind          string `json:"kind"`
	Direction     string `json:"direction"`
	Sink          string `json:"sink"`
	Connections   int    `json:"-"`
	ConnectionsIn *int   `json:"connections"`
	Bytes         int64  `json:"bytes"`
	DurationMs    int64  `json:"-"`
	DurationMsIn  *int64 `json:"duration_ms"`
	IntervalMs    int64  `json:"-"`
	IntervalMsIn  *int64 `json:"interval_ms"`
	IOSize        int64  `json:"-"`
	IOSizeIn      *int64 `json:"io_size"`
	TimeoutMs     int64  `json:"-"`
	TimeoutMsIn   *int64 `json:"timeout_ms"`
}

// NetworkResult is the "workload" object of a network response.
type NetworkResult struct {
	Common
	Direction   string           `json:"direction"`
	Sink        string           `json:"sink"`
	Protocol    string           `json:"protocol"`
	Connections int              `json:"connections"`
	BytesLimit  int64            `json:"bytes_limit"`
	DurationMs  int64            `json:"duration_ms"`
	IntervalMs  int64            `json:"interval_ms"`
	IOSize      int64            `json:"io_size"`
	In          *DirectionSeries `json:"in"`
	Out         *DirectionSeries `json:"out"`
}

// DirectionSeries is one direction's measurement. Samples[k] is the bytes received in
// [k·interval, (k+1)·interval) after the start (when the agent began sending the requests).
type DirectionSeries struct {
	Bytes      int64   `json:"bytes"`
	ElapsedS   float64 `json:"elapsed_s"`
	Throughput float64 `json:"throughput_bytes_per_s"`
	SampledAt  string  `json:"sampled_at"` // "agent" or "sink"
	Samples    []int64 `json:"samples"`
}

func (n *Network) Validate() error {
	if err := oneOf("workload.direction", &n.Direction, "in", "in", "out", "both"); err != nil {
		return err
	}
	if n.Sink == "" {
		n.Sink = os.Getenv("FAASCOPE_NETWORK_SINK")
	}
	if n.Sink == "" {
		return Invalid("workload.sink", "required: host:port of a faascope sink (or set FAASCOPE_NETWORK_SINK)")
	}
	if _, _, err := net.SplitHostPort(n.Sink); err != nil {
		return Invalid("workload.sink", "must be host:port (got %q)", n.Sink)
	}
	n.Connections = orDefault(n.ConnectionsIn, 1)
	if n.Connections < 1 || n.Connections > MaxConnections {
		return Invalid("workload.connections", "must be between 1 and %d (got %d)", MaxConnections, n.Connections)
	}
	n.IntervalMs = orDefault(n.IntervalMsIn, 20)
	if n.IntervalMs < 1 || n.IntervalMs > 60000 {
		return Invalid("workload.interval_ms", "must be between 1 and 60000 (got %d)", n.IntervalMs)
	}
	if n.Bytes < 0 || n.Bytes > 1<<40 {
		return Invalid("workload.bytes", "must be between 0 and %d (got %d)", int64(1<<40), n.Bytes)
	}
	n.DurationMs = orDefault(n.DurationMsIn, 10000)
	if n.DurationMs < 1 || n.DurationMs > 900000 {
		return Invalid("workload.duration_ms", "must be between 1 and 900000 (got %d)", n.DurationMs)
	}
	// The series covers the duration plus what is still in flight when the sender stops.
	if (n.DurationMs*2+5000)/n.IntervalMs > MaxNetworkSamples {
		return Invalid("workload.interval_ms", "too small for duration_ms %d: at most %d samples (2·duration_ms+5 s)/interval_ms", n.DurationMs, MaxNetworkSamples)
	}
	n.IOSize = orDefault(n.IOSizeIn, 128<<10)
	if n.IOSize < 1 || n.IOSize > 16<<20 {
		return Invalid("workload.io_size", "must be between 1 and %d (got %d)", 16<<20, n.IOSize)
	}
	n.TimeoutMs = orDefault(n.TimeoutMsIn, 5000)
	if n.TimeoutMs < 1 || n.TimeoutMs > 900000 {
		return Invalid("workload.timeout_ms", "must be between 1 and 900000 (got %d)", n.TimeoutMs)
	}
	return nil
}

// sinkHeader is the first line the agent sends on each connection.
type sinkHeader struct {
	Version    int    `json:"faascope_sink"`
	Mode       string `json:"mode"` // "recv": the sink receives; "send": the sink sends
	Session    string `json:"session"`
	Bytes      int64  `json:"bytes"`
	DurationMs int64  `json:"duration_ms"`
	IntervalMs int64  `json:"interval_ms"`
}

// sinkReply is the sink's answer line: an acknowledgement at the start ({"ok": true}) and,
// for uploads, its receive series after the agent's half-close.
type sinkReply struct {
	OK         bool    `json:"ok"`
	Error      string  `json:"error"`
	Bytes      int64   `json:"bytes"`
	IntervalMs int64   `json:"interval_ms"`
	Samples    []int64 `json:"samples"`
	FirstNs    int64   `json:"first_ns"` // first byte after the session start, sink clock
	LastNs     int64   `json:"last_ns"`
}

// series counts bytes into fixed intervals from a start time; safe for concurrent adds.
type series struct {
	start    time.Time
	interval time.Duration
	bins     []atomic.Int64
	first    atomic.Int64 // ns after start of the first byte, +1 (0 = none yet)
	last     atomic.Int64
	total    atomic.Int64
}

func newSeries(start time.Time, interval time.Duration, n int) *series {
	return &series{start: start, interval: interval, bins: make([]atomic.Int64, n)}
}

func (s *series) add(n int64, at time.Time) {
	d := at.Sub(s.start)
	k := int(d / s.interval)
	if k >= len(s.bins) {
		k = len(s.bins) - 1
	}
	if k < 0 {
		k = 0
	}
	s.bins[k].Add(n)
	s.total.Add(n)
	s.first.CompareAndSwap(0, int64(d)+1)
	for {
		l := s.last.Load()
		if int64(d) <= l || s.last.CompareAndSwap(l, int64(d)) {
			break
		}
	}
}

func (s *series) transfer() *DirectionSeries {
	last := len(s.bins)
	for last > 0 && s.bins[last-1].Load() == 0 {
		last--
	}
	out := make([]int64, last)
	for i := range out {
		out[i] = s.bins[i].Load()
	}
	t := &DirectionSeries{Bytes: s.total.Load(), SampledAt: "agent", Samples: out}
	if f := s.first.Load(); f > 0 {
		t.ElapsedS = time.Duration(s.last.Load() - (f - 1)).Seconds()
	}
	if t.ElapsedS > 0 {
		t.Throughput = float64(t.Bytes) / t.ElapsedS
	}
	return t
}

func (n *Network) Run(ctx context.Context) (any, error) {
	if n.Sink == "" {
		if err := n.Validate(); err != nil {
			return nil, err
		}
	}
	res := NetworkResult{Common: Common{Kind: "network"}, Direction: n.Direction, Sink: n.Sink, Protocol: "faascope",
		Connections: n.Connections, BytesLimit: n.Bytes, DurationMs: n.DurationMs, IntervalMs: n.IntervalMs, IOSize: n.IOSize}
	idb := make([]byte, 8)
	if _, err := rand.Read(idb); err != nil {
		return nil, &Error{Type: Internal, Message: "crypto/rand: " + err.Error()}
	}
	session := hex.EncodeToString(idb)

	// Connect everything first (the handshake is not part of the measurement).
	var dirs []string
	switch n.Direction {
	case "both":
		dirs = []string{"in", "out"}
	default:
		dirs = []string{n.Direction}
	}
	type conn struct {
		c   net.Conn
		r   *bufio.Reader
		dir string
	}
	var conns []conn
	defer func() {
		for _, c := range conns {
			c.c.Close()
		}
	}()
	timeout := time.Duration(n.TimeoutMs) * time.Millisecond
	perConn := int64(0)
	if n.Bytes > 0 {
		perConn = (n.Bytes + int64(n.Connections) - 1) / int64(n.Connections)
	}
	d := net.Dialer{Timeout: timeout}
	for _, dir := range dirs {
		for i := 0; i < n.Connections; i++ {
			c, err := d.DialContext(ctx, "tcp", n.Sink)
			if err != nil {
				return nil, &Error{Type: IOError, Message: fmt.Sprintf("connect to sink %s: %v", n.Sink, err)}
			}
			conns = append(conns, conn{c: c, r: bufio.NewReaderSize(c, 64<<10), dir: dir})
		}
	}
	interval := time.Duration(n.IntervalMs) * time.Millisecond
	nbins := int((n.DurationMs*2+5000)/n.IntervalMs) + 1
	dur := time.Duration(n.DurationMs) * time.Millisecond
	start := time.Now()
	deadline := start.Add(dur)
	in := newSeries(start, interval, nbins)
	// Headers: the sink starts its session clock at the first one it sees.
	for _, c := range conns {
		mode := "send"
		if c.dir == "out" {
			mode = "recv"
		}
		h := sinkHeader{Version: SinkProtocolVersion, Mode: mode, Session: session + "-" + c.dir, Bytes: perConn,
			DurationMs: n.DurationMs, IntervalMs: n.IntervalMs}
		b, _ := json.Marshal(h)
		_ = c.c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.c.Write(append(b, '\n')); err != nil {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("sink %s: sending the header: %v", n.Sink, err)}
		}
	}
	for _, c := range conns {
		var ack sinkReply
		if err := readReply(c.r, &ack); err != nil {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("sink %s: no acknowledgement: %v", n.Sink, err)}
		}
		if !ack.OK {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("sink %s refused: %s", n.Sink, ack.Error)}
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	replies := make(chan sinkReply, len(conns))
	grace := 5 * time.Second // what is in flight when the sender stops may take this long
	for _, c := range conns {
		wg.Add(1)
		go func(c conn) {
			defer wg.Done()
			_ = c.c.SetDeadline(deadline.Add(dur + grace))
			if c.dir == "in" {
				buf := make([]byte, n.IOSize)
				for {
					m, err := c.r.Read(buf)
					if m > 0 {
						in.add(int64(m), time.Now())
					}
					if err == io.EOF {
						return
					}
					if err != nil {
						errs <- fmt.Errorf("receiving: %w", err)
						return
					}
				}
			}
			buf := make([]byte, n.IOSize)
			var sent int64
			for (perConn == 0 || sent < perConn) && time.Now().Before(deadline) {
				m := int64(len(buf))
				if perConn > 0 {
					m = min(m, perConn-sent)
				}
				k, err := c.c.Write(buf[:m])
				sent += int64(k)
				if err != nil {
					errs <- fmt.Errorf("sending: %w", err)
					return
				}
			}
			if tc, ok := c.c.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			var rep sinkReply
			if err := readReply(c.r, &rep); err != nil {
				errs <- fmt.Errorf("reading the sink's series: %w", err)
				return
			}
			replies <- rep
		}(c)
	}
	wg.Wait()
	close(errs)
	close(replies)
	for err := range errs {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("sink %s: %v", n.Sink, err)}
	}
	end := time.Now()
	res.ElapsedS = end.Sub(start).Seconds()
	res.Ops = int64(len(conns))
	if n.Direction != "out" {
		res.In = in.transfer()
		res.Bytes += res.In.Bytes
	}
	if n.Direction != "in" {
		res.Out = mergeReplies(replies, n.IntervalMs)
		res.Bytes += res.Out.Bytes
	}
	return res, nil
}

func readReply(r *bufio.Reader, v *sinkReply) error {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long series: read the rest of the line.
		rest, err2 := r.ReadBytes('\n')
		line = append(append([]byte{}, line...), rest...)
		err = err2
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// mergeReplies sums the sink's per-connection series (all relative to the session's start).
func mergeReplies(replies <-chan sinkReply, intervalMs int64) *DirectionSeries {
	t := &DirectionSeries{SampledAt: "sink", Samples: []int64{}}
	var first, last int64 = -1, 0
	for r := range replies {
		t.Bytes += r.Bytes
		for len(t.Samples) < len(r.Samples) {
			t.Samples = append(t.Samples, 0)
		}
		for i, v := range r.Samples {
			t.Samples[i] += v
		}
		if r.Bytes > 0 {
			if first < 0 || r.FirstNs < first {
				first = r.FirstNs
			}
			last = max(last, r.LastNs)
		}
	}
	if first >= 0 {
		t.ElapsedS = time.Duration(last - first).Seconds()
	}
	if t.ElapsedS > 0 {
		t.Throughput = float64(t.Bytes) / t.ElapsedS
	}
	return t
}
