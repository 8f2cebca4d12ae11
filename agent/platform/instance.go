package platform

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxPayload is Lambda's limit for synchronous request and response payloads (6 MB).
const maxPayload = 6 * 1024 * 1024

// invocation is one request travelling through an instance.
type invocation struct {
	RequestID string
	Payload   []byte
	Deadline  time.Time
	// ClientContext is the caller's client context (JSON), sent as Lambda-Runtime-Client-Context
	// when not empty.
	ClientContext string
	TraceID       string // Lambda-Runtime-Trace-Id, X-Ray format (newTraceID)
	done          chan result
	// deadlineSpan is the function's timeout, for the message when it expires.
	deadlineSpan time.Duration
	// InvokedArn is the ARN the caller invoked: qualified when it named a version or alias.
	InvokedArn string
	// When the sandbox was thawed (run), the event written to the runtime (/next, under the
	// instance's mu) and the runtime's answer begun (/response or /error, under mu): the
	// invocation's steps (invokeMeta.Steps) are cut there.
	thawed, delivered, answered time.Time
}

// result is how an invocation ended.
type result struct {
	Payload   []byte
	FuncError string // "" on success; else Lambda's X-Amz-Function-Error value ("Unhandled")
	Killed    bool   // the sandbox was destroyed (timeout, crash, OOM)
	// Undelivered: the runtime was gone before it took the invocation, which never reached the
	// function, so Invoke may give it to a fresh instance instead (see Platform.Invoke).
	Undelivered bool
}

// Instance is one warm-able execution environment: a sandbox plus the Runtime API its
// bootstrap polls. It serves one invocation at a time.
type Instance struct {
	ID       string
	Function string
	Version  int     // the generation it was started with: $LATEST's, or its version's (generation.go)
	pool     poolKey // the function and version it serves
	Sandbox  *Sandbox
	Created  time.Time
	InitDur  time.Duration // bootstrap exec'd → first /next, Lambda's "Init Duration"
	SetupDur time.Duration // instance created → bootstrap exec'd: the platform's part
	// SetupSteps split SetupDur: the host's steps (Sandbox.Steps), then the sandbox init's.
	SetupSteps []Step
	Modelled   time.Duration // the profile's modelled cold-start delay (profile.go), in SetupDur
	readyAt    time.Time     // when the first /next arrived (written before ready is closed)
	Logs       *logBuffer
	ready      chan struct{}    // closed at the first /next
	initErr    chan []byte      // body of /runtime/init/error
	waiters    chan *nextWaiter // a /next waiting for an invocation (unbuffered: a rendezvous)
	listener   net.Listener
	owner      *runtimeAPIOwner // the uid the host-side listener serves (runtimeapi_owner.go); nil inside a namespace
	server     *http.Server
	mu         sync.Mutex
	current    *invocation
	lastUsed   time.Time
	busy       bool
	dead       bool
	invokes    int
	readyOnce  sync.Once
	freezer    idleFreezer // frozen between invocations (freeze.go)
	polling    atomic.Bool // a /next is waiting for an invocation
}

// newInstance prepares the Runtime API the sandbox will be told about. Without a network of its
// own (onHost) the sandbox reaches it on a host loopback port opened here; with one,
// setupSandboxNet opens 127.0.0.1:9001 inside the sandbox's namespace and this server serves
// that socket directly (serveInside): no relay between the runtime and the platform.
// onHost serves its Runtime API on the host's loopback (the sandbox shares the host's network, or
// is a plain process); ownerOnly then accepts only the sandbox's uid (runtimeapi_owner.go).
func newInstance(id, function string, version int, onHost, ownerOnly bool) (*Instance, error) {
	in := &Instance{
		ID: id, Function: function, Version: version, Created: time.Now(),
		Logs: newLogBuffer(64 * 1024), ready: make(chan struct{}), initErr: make(chan []byte, 1),
		waiters: make(chan *nextWaiter),
	}
	// No ReadTimeout: it would cancel a /next long-polling for the next invocation. Bodies get
	// their deadline in their handlers (limits.go).
	in.server = &http.Server{Handler: in.runtimeAPI(), ReadHeaderTimeout: runtimeAPIHeaderTimeout,
		IdleTimeout: runtimeAPIIdleTimeout}
	if onHost {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		if ownerOnly {
			in.owner = newRuntimeAPIOwner()
			ln = &ownerListener{Listener: ln, owner: in.owner}
		}
		in.listener = limitConns(ln, hostRuntimeAPIConns)
		go in.server.Serve(in.listener)
	}
	return in, nil
}

// serveInside serves the Runtime API on a listener in the sandbox's network namespace.
func (in *Instance) serveInside(ln net.Listener) { in.server.Serve(ln) }

// RuntimeAPIAddr is the value of AWS_LAMBDA_RUNTIME_API for this instance.
func (in *Instance) RuntimeAPIAddr() string {
	if in.listener == nil {
		return "127.0.0.1:" + strconv.Itoa(RuntimeAPIPort)
	}
	return in.listener.Addr().String()
}

func (in *Instance) runtimeAPI() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", in.handleNext)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", in.handleResponse)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", in.handleError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", in.handleInitError)
	return mux
}

func (in *Instance) handleNext(w http.ResponseWriter, r *http.Request) {
	// One /next at a time, as Lambda serves one per execution environment: a second one while
	// the first waits is refused as Lambda's Runtime API refuses a call the runtime's state does
	// not allow (403 InvalidStateTransition, as in aws-lambda-runtime-interface-emulator's
	// rapi handlers), instead of parking another connection and goroutine.
	if !in.polling.CompareAndSwap(false, true) {
		runtimeAPIError(w, http.StatusForbidden, "InvalidStateTransition",
			"a /next is already waiting for this execution environment's next invocation")
		return
	}
	defer in.polling.Store(false)
	in.freezer.nextCalled()
	// The bootstrap can poll before StartSandbox has returned (the sandbox is released from
	// inside it), so only note the time here; waitReady derives the init duration.
	in.readyOnce.Do(func() {
		in.readyAt = time.Now()
		close(in.ready)
	})
	// The invoking goroutine takes this /next and writes the event to it itself (deliver): no
	// hand-off to this goroutine between the invocation's arrival and its write. This handler
	// only keeps the ResponseWriter alive until that write is done.
	wt := &nextWaiter{w: w, r: r, done: make(chan struct{})}
	select {
	case in.waiters <- wt:
		<-wt.done
	case <-r.Context().Done():
	}
}

// nextWaiter is a /next waiting for an invocation; done is closed once deliver is through with it.
type nextWaiter struct {
	w    http.ResponseWriter
	r    *http.Request
	done chan struct{}
}

// deliver writes inv as the answer to the waiting /next, from the invoking goroutine. False: the
// runtime hung up (it is exiting) as the invocation arrived, and never saw it.
func (in *Instance) deliver(wt *nextWaiter, inv *invocation) bool {
	defer close(wt.done)
	in.mu.Lock()
	in.current = inv
	in.mu.Unlock()
	if wt.r.Context().Err() != nil {
		in.take(inv.RequestID)
		return false
	}
	h := wt.w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.RequestID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.Deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", inv.InvokedArn)
	h.Set("Lambda-Runtime-Trace-Id", inv.TraceID)
	if inv.ClientContext != "" {
		h.Set("Lambda-Runtime-Client-Context", inv.ClientContext)
	}
	h.Set("Content-Type", "application/json")
	// With its length declared the event is complete once flushed: one write(2), and the
	// runtime need not wait for a chunked body's last chunk, which net/http writes only when
	// the /next handler's goroutine returns (after a wake-up).
	h.Set("Content-Length", strconv.Itoa(len(inv.Payload)))
	// Delivered is when the event goes to the kernel (as the dispatcher's send_ns): read after
	// the write, it was late whenever the runtime, woken by it, took this CPU first.
	at := time.Now()
	wt.w.Write(inv.Payload)
	if f, ok := wt.w.(http.Flusher); ok {
		f.Flush()
	}
	in.mu.Lock()
	inv.delivered = at
	in.mu.Unlock()
	return true
}

// newTraceID is an X-Ray trace header as Lambda's Runtime API gives it in
// Lambda-Runtime-Trace-Id: Root=1-{epoch seconds, 8 hex}-{96 random bits, 24 hex};
// Parent={64 random bits, 16 hex};Sampled=0 (nothing is traced locally). A runtime sets
// _X_AMZN_TRACE_ID from it itself; for provided.* runtimes Lambda does not.
func newTraceID(now time.Time) string {
	var b [20]byte
	rand.Read(b[:])
	return fmt.Sprintf("Root=1-%08x-%x;Parent=%x;Sampled=0", now.Unix(), b[:12], b[12:])
}

// take claims the current invocation if id matches it, so each ends exactly once.
func (in *Instance) take(id string) *invocation {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.current == nil || in.current.RequestID != id {
		return nil
	}
	inv := in.current
	in.current = nil
	return inv
}

// readRuntimeBody reads a /response or /error body (up to limit bytes) within
// runtimeAPIBodyTimeout: a runtime that stalls in its body is cut instead of holding the
// connection.
func readRuntimeBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	tb := newTimedBody(http.NewResponseController(w), r, runtimeAPIBodyTimeout, runtimeAPIBodyTimeout)
	defer tb.done()
	return io.ReadAll(io.LimitReader(tb, limit))
}

// The headers and trailers of a response in Lambda's streaming mode.
const (
	responseModeHeader = "Lambda-Runtime-Function-Response-Mode"
	errorTypeTrailer   = "Lambda-Runtime-Function-Error-Type"
	errorBodyTrailer   = "Lambda-Runtime-Function-Error-Body" // base64 of the error's JSON
)

func (in *Instance) handleResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	in.markRuntime(id)
	if mode := r.Header.Get(responseModeHeader); mode != "" && mode != "streaming" {
		// As Lambda's Runtime API (aws-lambda-runtime-interface-emulator's rapi handler).
		if inv := in.take(id); inv != nil {
			inv.done <- result{Payload: lambdaError("Runtime.InvalidResponseModeHeader",
				fmt.Sprintf("Invalid %s %q: the only mode is streaming", responseModeHeader, mode)), FuncError: "Unhandled"}
		}
		runtimeAPIError(w, http.StatusBadRequest, "InvalidFunctionResponseMode", "Invalid function response mode")
		return
	}
	body, err := readRuntimeBody(w, r, maxPayload+1)
	if err != nil {
		// The body ended before its declared length or final chunk (the runtime died or reset
		// the connection, or stalled past the body deadline): the function did not answer, it
		// failed, as Lambda reports it (Runtime.TruncatedResponse; the runtime gets the Runtime
		// API's 400 TruncatedHTTPRequest).
		if inv := in.take(id); inv != nil {
			inv.done <- result{Payload: lambdaError("Runtime.TruncatedResponse",
				fmt.Sprintf("The runtime's response was cut after %d bytes: %v", len(body), err)), FuncError: "Unhandled"}
		}
		runtimeAPIError(w, http.StatusBadRequest, "TruncatedHTTPRequest", "HTTP request detected as truncated")
		return
	}
	inv := in.take(id)
	if inv == nil {
		runtimeAPIError(w, http.StatusBadRequest, "InvalidRequestID", "unknown or finished request id")
		return
	}
	if len(body) > maxPayload {
		inv.done <- result{Payload: lambdaError("Function.ResponseSizeTooLarge",
			fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", len(body), maxPayload)),
			FuncError: "Unhandled"}
		runtimeAPIError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "response too large")
		return
	}
	// A streaming runtime that fails midway says so in the trailers, read with the body's end:
	// the invocation failed with that error, whatever was streamed before it.
	if typ := r.Trailer.Get(errorTypeTrailer); typ != "" {
		errBody, _ := base64.StdEncoding.DecodeString(r.Trailer.Get(errorBodyTrailer))
		inv.done <- result{Payload: normaliseErrorBody(errBody, typ), FuncError: "Unhandled"}
	} else {
		inv.done <- result{Payload: body}
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

// markRuntime ends the runtime's turn (from the hand-over to its /response or /error) in the
// steps of the invocation it answers.
func (in *Instance) markRuntime(id string) {
	in.mu.Lock()
	if in.current != nil && in.current.RequestID == id {
		in.current.answered = time.Now()
	}
	in.mu.Unlock()
}

func (in *Instance) handleError(w http.ResponseWriter, r *http.Request) {
	in.markRuntime(r.PathValue("id"))
	body, _ := readRuntimeBody(w, r, maxPayload)
	inv := in.take(r.PathValue("id"))
	if inv == nil {
		runtimeAPIError(w, http.StatusBadRequest, "InvalidRequestID", "unknown or finished request id")
		return
	}
	inv.done <- result{Payload: normaliseErrorBody(body, r.Header.Get("Lambda-Runtime-Function-Error-Type")), FuncError: "Unhandled"}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func (in *Instance) handleInitError(w http.ResponseWriter, r *http.Request) {
	body, _ := readRuntimeBody(w, r, maxPayload)
	select {
	case in.initErr <- normaliseErrorBody(body, r.Header.Get("Lambda-Runtime-Function-Error-Type")):
	default:
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

// normaliseErrorBody makes sure a function error carries errorMessage and errorType.
func normaliseErrorBody(body []byte, headerType string) []byte {
	var e map[string]any
	if json.Unmarshal(body, &e) != nil || e == nil {
		e = map[string]any{"errorMessage": strings.TrimSpace(string(body))}
	}
	if _, ok := e["errorType"]; !ok {
		if headerType == "" {
			headerType = "Runtime.Unknown"
		}
		e["errorType"] = headerType
	}
	b, _ := json.Marshal(e)
	return b
}

func lambdaError(typ, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"errorType": typ, "errorMessage": msg})
	return b
}

func runtimeAPIError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": msg})
}

// waitReady waits for the bootstrap's first /next, an init error, or the sandbox dying.
func (in *Instance) waitReady(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-in.ready:
		// The runtime asked for work: INIT ends (initcpu.go), with the profile's modelled
		// overhead inside it, as Lambda's Init Duration has it.
		overhead, err := in.Sandbox.endInit(ctx)
		if err != nil {
			return err
		}
		in.readyAt = in.readyAt.Add(overhead)
		in.setupTimes()
		return nil
	case body := <-in.initErr:
		return &initError{payload: body}
	case <-in.Sandbox.Exited():
		return &initError{payload: lambdaError("Runtime.ExitError",
			"Runtime exited during init: "+exitText(in.Sandbox))}
	case <-t.C:
		return &initError{payload: lambdaError("Sandbox.Timedout",
			fmt.Sprintf("Init did not complete within %.2f seconds", limit.Seconds()))}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// setupTimes splits the cold start at the bootstrap's exec: the platform's set-up before it
// (with its steps), the runtime's init after it. Without the init's report (a plain process,
// --isolation none) the bootstrap started when the host's set-up ended.
func (in *Instance) setupTimes() {
	sb := in.Sandbox
	in.SetupSteps = []Step{{"instance", sb.Started.Sub(in.Created) - in.Modelled}} // Runtime API, limits, environment
	if in.Modelled > 0 {
		in.SetupSteps = append(in.SetupSteps, Step{"modelled", in.Modelled})
	}
	in.SetupSteps = append(in.SetupSteps, sb.Steps...)
	execAt := sb.Started.Add(sb.Setup)
	if rep := sb.initReport(time.Second); !rep.Exec.IsZero() {
		// The init's process came up while the host finished (cgroup, network): only the wait
		// from the release to its reading the go-ahead adds to the set-up.
		in.SetupSteps = append(in.SetupSteps, Step{"init_wakeup", rep.Released.Sub(execAt)})
		in.SetupSteps = append(in.SetupSteps, rep.Steps...)
		execAt = rep.Exec
	}
	in.SetupDur = execAt.Sub(in.Created)
	in.InitDur = in.readyAt.Sub(execAt)
}

type initError struct {
	payload []byte
	logs    []byte
}

func (e *initError) Error() string { return string(e.payload) }

// run delivers one invocation and waits for its end: a response, an error, the deadline, or
// the sandbox dying (crash or out of memory).
func (in *Instance) run(inv *invocation) result {
	in.freezer.handOver(in.Sandbox)
	inv.thawed = time.Now()
	timer := time.NewTimer(time.Until(inv.Deadline)) // one timer for both waits
	defer timer.Stop()
	select {
	case wt := <-in.waiters:
		if !in.deliver(wt, inv) {
			return result{Undelivered: true, Killed: true}
		}
	case <-in.Sandbox.Exited():
		// The runtime never took the invocation (it exited after its last answer, as
		// aws-lambda-go does after a panic): the caller may retry it on a fresh instance.
		return result{Payload: lambdaError("Runtime.ExitError", "Runtime exited before the invocation: "+exitText(in.Sandbox)),
			FuncError: "Unhandled", Killed: true, Undelivered: true}
	case <-timer.C:
		return in.timedOut(inv)
	}
	select {
	case r := <-inv.done:
		return r
	case <-in.Sandbox.Exited():
		if in.take(inv.RequestID) == nil {
			// A handler ended it as the process went (every other taker sends its result).
			return <-inv.done
		}
		if in.Sandbox.OOMKilled() {
			return result{Payload: lambdaError("Runtime.OutOfMemory",
				"Runtime exited with error: signal: killed (out of memory: the function exceeded its memory limit)"),
				FuncError: "Unhandled", Killed: true}
		}
		return result{Payload: lambdaError("Runtime.ExitError", "Runtime exited with error: "+exitText(in.Sandbox)),
			FuncError: "Unhandled", Killed: true}
	case <-timer.C:
		return in.timedOut(inv)
	}
}

// markRun splits an invocation's run into its steps, as far as it got (call after run), and
// returns when the event was delivered to the runtime and its answer began (zero if not).
func (in *Instance) markRun(inv *invocation, st *stepTimer) (delivered, answered time.Time) {
	in.mu.Lock()
	delivered, answered = inv.delivered, inv.answered
	in.mu.Unlock()
	defer st.mark("response")
	for _, m := range []struct {
		name string
		at   time.Time
	}{{"thaw", inv.thawed}, {"hand_over", delivered}, {"runtime", answered}} {
		if m.at.IsZero() || m.at.Before(st.last) {
			break
		}
		st.steps = append(st.steps, Step{m.name, m.at.Sub(st.last)})
		st.last = m.at
	}
	return delivered, answered
}

func (in *Instance) timedOut(inv *invocation) result {
	in.take(inv.RequestID)
	return result{Payload: lambdaError("Sandbox.Timedout",
		fmt.Sprintf("%s Task timed out after %.2f seconds", time.Now().UTC().Format(time.RFC3339), inv.timeout().Seconds())),
		FuncError: "Unhandled", Killed: true}
}

func (inv *invocation) timeout() time.Duration { return inv.deadlineSpan }

func exitText(sb *Sandbox) string {
	if err := sb.ExitErr(); err != nil {
		return err.Error()
	}
	if sb.OOMKilled() {
		return "signal: killed (out of memory)"
	}
	return "exit status 0"
}

// exited reports whether the instance's process has ended.
func (in *Instance) exited() bool {
	select {
	case <-in.Sandbox.Exited():
		return true
	default:
		return false
	}
}

// close stops the Runtime API and destroys the sandbox.
func (in *Instance) close() {
	in.mu.Lock()
	in.dead = true
	in.mu.Unlock()
	in.freezer.stop()
	// The sandbox goes first: closing the Runtime API under a live bootstrap only makes it
	// reconnect into a closed port.
	if in.Sandbox != nil {
		in.Sandbox.Destroy()
	}
	in.server.Close()
}
