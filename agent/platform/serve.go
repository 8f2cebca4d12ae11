package platform

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"
)

func pid() int { return os.Getpid() }

// Serve runs the Lambda API until ctx ends, then shuts down and destroys all instances.
func (p *Platform) Serve(ctx context.Context, ln net.Listener) error {
	// Bodies have their own deadlines (limits.go); no ReadTimeout, which would also cut a
	// synchronous Invoke waiting for its function (up to 900 s).
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 30 * time.Second, IdleTimeout: controlAPIIdleTimeout}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		p.Close()
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p.cancel() // stop async work and the reaper first, so in-flight requests end
	p.Close()
	srv.Shutdown(sctx)
	return nil
}
