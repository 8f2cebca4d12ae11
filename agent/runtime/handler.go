package runtime

import (
	"context"
	"fmt"
	"io"
	"net/http"
	goruntime "runtime/debug"
	"sync"
	"time"

	"github.com/faascope/faascope/agent/workloads"
)

// Response is the agent's answer to every invocation, successful or not.
type Response struct {
	OK       bool             `json:"ok"`
	Cold     bool             `json:"cold"`
	Instance Instance         `json:"instance"`
	Timings  Timings          `json:"timings"`
	Workload any              `json:"workload"` // null unless ok
	Error    *workloads.Error `json:"error"`
}

// Timings are wall-clock Unix nanoseconds, comparable with the caller's own timestamps to split
// a round trip into platform overhead, queueing and work. The workload span includes untimed
// preparation (e.g. laying out a file to read); it is null when the workload never started.
type Timings struct {
	ReceivedNs      int64  `json:"received_ns"`
	WorkloadStartNs *int64 `json:"workload_start_ns"`
	WorkloadEndNs   *int64 `json:"workload_end_ns"`
}

// decodeRequest is a variable so tests can inject a misbehaving workload.
var decodeRequest = DecodeRequest

// Handler runs invocations one at a time, as a FaaS instance does.
type Handler struct {
	mu     sync.Mutex
	inst   Instance
	served bool
	log    io.Writer
}

// NewHandler records the instance's identity; it fails only if no random id can be made.
func NewHandler(log io.Writer) (*Handler, error) {
	inst, err := newInstance(time.Now())
	if err != nil {
		return nil, fmt.Errorf("instance id: %w", err)
	}
	return &Handler{inst: inst, log: log}, nil
}

// Invoke handles one payload received at the given time and returns the HTTP status that goes
// with the response: 200, 400 for InvalidRequest, 500 for other failures.
func (h *Handler) Invoke(ctx context.Context, received time.Time, payload []byte) (int, *Response) {
	return h.respond(received, func(resp *Response) (string, error) { return h.run(ctx, payload, resp) })
}

// Reject answers an invocation whose payload could not even be read.
func (h *Handler) Reject(received time.Time, err error) (int, *Response) {
	return h.respond(received, func(*Response) (string, error) { return "", err })
}

func (h *Handler) respond(received time.Time, do func(*Response) (string, error)) (int, *Response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	resp := &Response{Cold: !h.served, Timings: Timings{ReceivedNs: received.UnixNano()}}
	h.served = true
	h.inst.refreshLimits()
	resp.Instance = h.inst

	kind, err := do(resp)
	status := http.StatusOK
	if err != nil {
		resp.OK, resp.Workload, resp.Error = false, nil, workloads.AsError(err)
		status = http.StatusInternalServerError
		if resp.Error.Type == workloads.InvalidRequest {
			status = http.StatusBadRequest
		}
	} else {
		resp.OK = true
	}
	if h.log != nil {
		if resp.OK {
			fmt.Fprintf(h.log, "faascope-agent: %s ok cold=%t\n", kind, resp.Cold)
		} else {
			fmt.Fprintf(h.log, "faascope-agent: %s failed cold=%t: %s\n", kind, resp.Cold, resp.Error.Error())
		}
	}
	return status, resp
}

// run decodes and runs the workload; a panic becomes an Internal error so the caller still gets
// the agent's JSON rather than a dead instance.
func (h *Handler) run(ctx context.Context, payload []byte, resp *Response) (kind string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &workloads.Error{Type: workloads.Internal, Message: fmt.Sprintf("panic: %v", r)}
			if h.log != nil {
				fmt.Fprintf(h.log, "faascope-agent: panic: %v\n%s", r, goruntime.Stack())
			}
		}
	}()
	w, kind, err := decodeRequest(payload)
	if err != nil {
		return kind, err
	}
	start := time.Now().UnixNano()
	resp.Timings.WorkloadStartNs = &start
	result, err := w.Run(ctx)
	end := time.Now().UnixNano()
	resp.Timings.WorkloadEndNs = &end
	if err != nil {
		return kind, err
	}
	resp.Workload = result
	return kind, nil
}
