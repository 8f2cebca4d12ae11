package platform

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Limits that keep one function or one client from taking the platform down (issue #14): a
// Runtime API that any sandbox can flood with connections, request bodies buffered whole in
// memory, packages that unzip to gigabytes. Each limit is Lambda's where Lambda has one, and
// answers with the error Lambda answers; docs/reliability.md lists them.

// Package sizes, as Lambda's quotas page gives them ("Deployment package (.zip file archive)
// size: 50 MB (zipped, when uploaded through the Lambda API or SDKs) … 250 MB (unzipped)") and
// with the messages the Lambda API answers (seen in AWS's answers quoted by users and in
// LocalStack's parity-tested provider: "Zipped size must be smaller than 52428800 bytes",
// "Request must be smaller than 70167211 bytes for the CreateFunction operation", both
// RequestEntityTooLargeException; "Unzipped size must be smaller than 262144000 bytes",
// InvalidParameterValueException, HTTP 400).
const (
	maxZippedBytes      = 52428800  // a package uploaded inline (Code.ZipFile)
	maxCodeRequestBytes = 70167211  // a CreateFunction/UpdateFunctionCode body: the base64 zip plus the rest
	maxUnzippedBytes    = 262144000 // the package's files, unpacked
	// maxRequestFields bounds what a code request carries besides the zip (name, environment,
	// tags: a few KiB on Lambda), and every other control API body: it is held in memory.
	maxRequestFields = 1 << 20
	// maxDrainBytes is how much of a refused body the platform still reads (and throws away)
	// so that a client that sends its whole body before reading (urllib3, so boto3) sees the
	// error instead of a reset connection. Beyond it the connection is cut.
	maxDrainBytes = 256 << 20
)

// Request bodies arrive within these times or are cut with RequestTimeoutException (408): a
// client trickling a body, or stalling in the middle of it, would otherwise hold a connection,
// a goroutine and a staging file for ever. Variables so tests can shorten them.
var (
	bodyStallTimeout = 30 * time.Second // no byte for this long
	bodyTotalTimeout = 5 * time.Minute  // the whole body, from the handler's first read
)

// The Runtime API of one sandbox. A runtime needs one connection (two with an extension);
// Lambda serves one in-flight /next per execution environment. The platform keeps at most
// maxRuntimeAPIConns connections of a sandbox open and answers more with 429: without this,
// one function holding 8,000 connections used every descriptor the platform had.
const (
	maxRuntimeAPIConns = 8
	// hostRuntimeAPIConns bounds the host-side listener of a sandbox that shares the host's
	// network. A sandbox with its own network namespace has its Runtime API served on a
	// listener inside it (netns.go), bounded at maxRuntimeAPIConns: the platform holds at most
	// 8 of its sockets.
	hostRuntimeAPIConns = 2 * maxRuntimeAPIConns
	// runtimeAPIHeaderTimeout cuts a connection whose request headers do not arrive.
	runtimeAPIHeaderTimeout = 10 * time.Second
)

var (
	// runtimeAPIIdleTimeout closes keep-alive connections idle between requests. It must
	// outlast the longest invocation (900 s): a runtime's connection sits idle from the /next
	// that handed it the event until the /response, and a runtime whose kept-alive connection
	// is closed under it may fail its /response (Node's agent does).
	runtimeAPIIdleTimeout = 16 * time.Minute
	// runtimeAPIBodyTimeout bounds reading a /response or /error body (at most 6 MB over loopback).
	runtimeAPIBodyTimeout = 60 * time.Second
	// controlAPIIdleTimeout closes the control API's idle keep-alive connections.
	controlAPIIdleTimeout = 2 * time.Minute
	// controlAPIMaxConns caps the control API's connections (limitControlConns); 0: sized from
	// the platform's RLIMIT_NOFILE when it starts serving (controlAPIConnCap). Tests lower it.
	controlAPIMaxConns = 0
	// controlAPIStreamsPerConn is how many requests one HTTP/2 (h2c) connection to the control
	// API may have in flight (serve.go); a client needing more opens another connection.
	controlAPIStreamsPerConn = 1000
)

// connLimitListener admits at most cap(sem) connections at a time. Unlike
// golang.org/x/net/netutil.LimitListener it does not leave the others waiting in the accept
// queue (where a flood would starve the runtime's own next connection for ever): past the cap
// it first closes the connection that has waited longest without a request in flight, if it
// tracks connection states (evictIdle, the control API's), and otherwise answers the new one at
// once with the refusal and closes it, so a refused connection costs the platform no descriptor
// beyond that moment.
type connLimitListener struct {
	net.Listener
	sem     chan struct{}
	refusal []byte

	evictIdle bool // close an idle connection to admit a new one (trackState must see every state)
	mu        sync.Mutex
	open      map[*limitedConn]struct{} // with evictIdle: the connections holding a slot
}

// limitConns wraps ln so that at most n of its connections are open at once.
func limitConns(ln net.Listener, n int) net.Listener {
	body := fmt.Sprintf(`{"errorType":"TooManyConnections","errorMessage":"at most %d connections to the Runtime API of one execution environment"}`, n)
	return &connLimitListener{Listener: ln, sem: make(chan struct{}, n), refusal: httpRefusal(nil, body)}
}

func httpRefusal(headers []string, body string) []byte {
	h := "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nConnection: close\r\n"
	for _, x := range headers {
		h += x + "\r\n"
	}
	return []byte(h + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// limitControlConns wraps the control API's listener (serve.go): at most n connections; past
// them the longest idle one (connected without a request yet, or kept alive between requests)
// is closed to make room, which a client may always expect of an idle HTTP connection, so that
// a flood of idle connections cannot keep a real request out. Only when all n have a request in
// flight is the new one refused, with the Lambda API's throttling error (429
// TooManyRequestsException, which boto3 retries with back-off). The server must report every
// state change to trackState (http.Server.ConnState).
func limitControlConns(ln net.Listener, n int) *connLimitListener {
	msg := fmt.Sprintf("Rate Exceeded. (at most %d connections to the platform's API, all with a request in flight)", n)
	body := fmt.Sprintf(`{"Type":"User","Message":%q,"message":%q}`, msg, msg)
	return &connLimitListener{Listener: ln, sem: make(chan struct{}, n), evictIdle: true,
		open:    map[*limitedConn]struct{}{},
		refusal: httpRefusal([]string{"X-Amzn-ErrorType: TooManyRequestsException"}, body)}
}

// controlAPIConnCap is the control API's connection cap for a platform whose RLIMIT_NOFILE
// (after RaiseFDLimit) is fdLimit: a quarter of the descriptors, so that connections can never
// take the ones warm instances need (~8 each: at the 20,000 of an unprivileged start, 5,000
// connections leave 15,000 for ~1,900 instances), and at most maxControlAPIConns.
func controlAPIConnCap(fdLimit uint64) int {
	return int(min(fdLimit/4, maxControlAPIConns))
}

// maxControlAPIConns: 8x the default account concurrency (1,000), since a synchronous Invoke
// over HTTP/1.1 holds a connection for its whole run, so a client at the concurrency limit
// never meets the cap; and each idle connection costs a goroutine and ~8 KiB of buffers, so
// 8,192 of them stay under ~100 MiB.
const maxControlAPIConns = 8192

// limitRuntimeAPIListener bounds the sandbox-side listener of the Runtime API's relay; other
// relayed ports (storage stand-ins) are the function's business and keep their own limits.
func limitRuntimeAPIListener(ln net.Listener, m portMap) net.Listener {
	if m.Inside != RuntimeAPIPort {
		return ln
	}
	return limitConns(ln, maxRuntimeAPIConns)
}

func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := l.admit(c); lc != nil {
			return lc, nil
		}
		// The answer fits the socket's send buffer, so the write does not block; the
		// deadline only guards against a peer that somehow makes it.
		c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.Write(l.refusal)
		c.Close()
	}
}

// admit gives c a slot, if one is free or an idle connection can be closed for it.
func (l *connLimitListener) admit(c net.Conn) *limitedConn {
	for tries := 0; ; tries++ {
		select {
		case l.sem <- struct{}{}:
			lc := &limitedConn{Conn: c, state: http.StateNew, since: time.Now()}
			lc.release = func() { l.untrack(lc); <-l.sem }
			if l.evictIdle {
				l.mu.Lock()
				l.open[lc] = struct{}{}
				l.mu.Unlock()
			}
			return lc
		default:
		}
		// Closing the victim gives its slot back at once (limitedConn.Close), unless its own
		// goroutine is closing it too: try again a few times, then refuse.
		if !l.evictIdle || tries == 3 || !l.evictOldestIdle() {
			return nil
		}
	}
}

// evictOldestIdle closes the connection that has been without a request in flight longest.
func (l *connLimitListener) evictOldestIdle() bool {
	l.mu.Lock()
	var victim *limitedConn
	for c := range l.open {
		if (c.state == http.StateNew || c.state == http.StateIdle) && (victim == nil || c.since.Before(victim.since)) {
			victim = c
		}
	}
	if victim != nil {
		delete(l.open, victim) // no longer a candidate, even before its Close returns
	}
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	return true
}

// trackState is the http.Server's ConnState hook: it keeps each connection's state and since when.
func (l *connLimitListener) trackState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok || !l.evictIdle {
		return
	}
	l.mu.Lock()
	if _, open := l.open[lc]; open {
		lc.state, lc.since = st, time.Now()
	}
	l.mu.Unlock()
}

func (l *connLimitListener) untrack(c *limitedConn) {
	if l.evictIdle {
		l.mu.Lock()
		delete(l.open, c)
		l.mu.Unlock()
	}
}

// limitedConn gives its slot back when closed (once, however often it is closed).
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
	// under the listener's mu: the HTTP state and when it began (limitControlConns)
	state http.ConnState
	since time.Time
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite keeps the relay's half-close working through the wrapper.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// errBodyTimeout is a request body that did not arrive in time.
type errBodyTimeout struct{ msg string }

func (e *errBodyTimeout) Error() string { return e.msg }

// timedBody reads a request body under a deadline renewed at every read (stall) and one for the
// whole body (total), set on the connection itself so that a blocked read ends when they pass.
// Under a recorder (tests, the fuzzer) there is no connection and no deadline.
type timedBody struct {
	r      io.Reader
	rc     *http.ResponseController
	stall  time.Duration
	total  time.Duration
	end    time.Time
	n      int64 // bytes read
	eof    bool
	failed error
}

// rc is the response's controller (what the API package hands its handlers instead of the
// response itself).
func newTimedBody(rc *http.ResponseController, r *http.Request, stall, total time.Duration) *timedBody {
	return &timedBody{r: r.Body, rc: rc, stall: stall, total: total, end: time.Now().Add(total)}
}

func (b *timedBody) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	d := time.Now().Add(b.stall)
	if b.end.Before(d) {
		d = b.end
	}
	b.rc.SetReadDeadline(d) // ErrNotSupported under a recorder: no deadline to keep
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.eof = b.eof || err == io.EOF
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		msg := fmt.Sprintf("the request body stalled for %s", b.stall)
		if !time.Now().Before(b.end) {
			msg = fmt.Sprintf("the request body did not arrive within %s", b.total)
		}
		b.failed = &errBodyTimeout{msg}
		return n, b.failed
	}
	return n, err
}

// done ends the handler's reading. A body read to its end clears the deadline, so a kept-alive
// connection is not cut in its next request (and a long Invoke is not cut at all). Otherwise the
// deadline is left in the past: net/http reads what is left of a body after the handler, with
// no deadline of its own, and a client that stalled would hold it there (and the answer unsent)
// for ever; with the deadline passed that read fails at once and the connection is closed after
// the answer.
func (b *timedBody) done() {
	if b.eof {
		b.rc.SetReadDeadline(time.Time{})
	} else if b.failed == nil {
		b.rc.SetReadDeadline(time.Now())
	}
}

// drain reads and throws away what remains of a refused body, up to maxDrainBytes and under
// the body's deadlines, so that a client sending it all before reading sees the answer.
func (b *timedBody) drain() {
	if b.failed == nil {
		io.CopyN(io.Discard, b, maxDrainBytes)
	}
}

// tooLarge is the Lambda API's answer to a body or package over its size.
func tooLarge(msg string) error {
	return &apiError{http.StatusRequestEntityTooLarge, "RequestEntityTooLargeException", msg, ""}
}

func errUnzippedTooLarge() error {
	return errInvalid("Unzipped size must be smaller than %d bytes", maxUnzippedBytes)
}

// copyBudget copies src to dst while budget (bytes still allowed) lasts; more is
// errUnzippedTooLarge, with no more than the budget written. Unpacking goes through it so that
// a package is bounded by what was written, not by what its headers claim.
func copyBudget(dst io.Writer, src io.Reader, budget *int64) error {
	n, err := io.Copy(dst, io.LimitReader(src, *budget))
	*budget -= n
	if err != nil {
		return err
	}
	if *budget == 0 {
		var one [1]byte
		if m, _ := io.ReadFull(src, one[:]); m > 0 {
			return errUnzippedTooLarge()
		}
	}
	return nil
}

// The platform holds about 8 descriptors per warm instance (its Runtime API listener and
// connections, the sandbox's output pipe, the uid lock, the relay's sockets) besides one per
// client connection, so a few thousand warm instances outgrow a typical hard RLIMIT_NOFILE
// (20,000 on the development VM: ~2,300 instances). Go already lifts the soft limit to the hard
// one at start; as root the platform also lifts the hard limit, up to fs.nr_open.
//
// What a function sees must not change with it: the sandboxes get the limit the platform was
// started with (sandboxFDLimit, applied by StartSandbox before the sandbox's init is let go).
// The call is a raw prlimit64 so that the Go runtime's own bookkeeping of the original limit
// (restored in the children it starts when it lifted the soft limit itself) stays as it was.
const maxPlatformFDs = 1 << 20

// sandboxFDLimit is the RLIMIT_NOFILE the platform started with, set once RaiseFDLimit raised it.
var sandboxFDLimit *unix.Rlimit

// RaiseFDLimit lifts the platform's own RLIMIT_NOFILE as far as it may; it returns the soft
// limit before and after.
func RaiseFDLimit() (before, after uint64, err error) {
	var cur unix.Rlimit
	if err := prlimitRaw(0, nil, &cur); err != nil {
		return 0, 0, err
	}
	before = cur.Cur
	want := cur.Max
	if os.Geteuid() == 0 {
		want = maxPlatformFDs
		if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < want {
				want = n
			}
		}
		want = max(want, cur.Max)
	}
	if want <= cur.Cur {
		return before, cur.Cur, nil
	}
	next := unix.Rlimit{Cur: want, Max: max(want, cur.Max)}
	if err := prlimitRaw(0, &next, nil); err != nil {
		// Not allowed to lift the hard limit: settle for it.
		next = unix.Rlimit{Cur: cur.Max, Max: cur.Max}
		if err2 := prlimitRaw(0, &next, nil); err2 != nil {
			return before, before, err
		}
	}
	orig := cur
	sandboxFDLimit = &orig
	return before, next.Cur, nil
}

// restoreSandboxFDLimit gives a just-started sandbox process the platform's original limit.
func restoreSandboxFDLimit(pid int) error {
	if sandboxFDLimit == nil {
		return nil
	}
	return prlimitRaw(pid, sandboxFDLimit, nil)
}

func prlimitRaw(pid int, newLimit, old *unix.Rlimit) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_PRLIMIT64, uintptr(pid), unix.RLIMIT_NOFILE,
		uintptr(unsafe.Pointer(newLimit)), uintptr(unsafe.Pointer(old)), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
