package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/faascope/faascope/agent/workloads"
)

// MaxPayload is Lambda's synchronous payload limit (6 MB); HTTP mode keeps the same bound.
const MaxPayload = 6 << 20

// NewHTTPHandler serves invocations for Cloud Run-style platforms: POST / or /invoke with the
// same payload as on Lambda, and GET /healthz for readiness probes.
func NewHTTPHandler(h *Handler) http.Handler {
	mux := http.NewServeMux()
	invoke := func(w http.ResponseWriter, r *http.Request) {
		received := time.Now()
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPayload))
		var status int
		var resp *Response
		if err != nil {
			status, resp = h.Reject(received, workloads.Invalid("request", "reading the body: %v", err))
		} else {
			status, resp = h.Invoke(r.Context(), received, body)
		}
		writeJSON(w, status, resp)
	}
	mux.HandleFunc("POST /{$}", invoke)
	mux.HandleFunc("POST /invoke", invoke)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(map[string]any{"ok": false, "error": workloads.Error{Type: workloads.Internal, Message: err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// ServeHTTP serves on addr until ctx is done, then drains in-flight invocations.
func ServeHTTP(ctx context.Context, addr string, h *Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return Serve(ctx, ln, h)
}

// Serve is ServeHTTP on an existing listener (tests use a loopback port chosen by the kernel).
func Serve(ctx context.Context, ln net.Listener, h *Handler) error {
	srv := &http.Server{Handler: NewHTTPHandler(h), ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-done
}
