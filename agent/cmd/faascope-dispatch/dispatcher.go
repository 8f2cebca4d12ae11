package main

// The dispatcher's state and what both senders (HTTP/1.1, h2c) share: send windows, stopping,
// counting members resolved, waiting for an instant, reporting a reply or a failed read.

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

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
