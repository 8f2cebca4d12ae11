package platform

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func pid() int { return os.Getpid() }

// Serve runs the Lambda API h (lambdaapi.Handler(p): the core does not import its API) until
// ctx ends, then shuts down and destroys all instances.
func (p *Platform) Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	// Bodies have their own deadlines (limits.go); no ReadTimeout, which would also cut a
	// synchronous Invoke waiting for its function (up to 900 s).
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: controlAPIIdleTimeout}
	// HTTP/1.1 for boto3 and the AWS CLI, and HTTP/2 without TLS (h2c, prior knowledge: RFC 9113
	// §3.3) on the same port for a client that multiplexes: a burst of thousands of concurrent
	// invocations then needs a few connections, not one each (every connection is a descriptor
	// of the platform's, whose RLIMIT_NOFILE also holds every warm instance's). The server tells
	// one from the other by the HTTP/2 connection preface.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: controlAPIStreamsPerConn}
	// A cap on connections (limits.go), well below the descriptors the platform may hold: 22,000
	// idle connections used to exhaust them and make ListFunctions wait 13 s.
	maxConns := controlAPIMaxConns
	if maxConns <= 0 {
		lim := unix.Rlimit{Cur: 4 * maxControlAPIConns}
		prlimitRaw(0, nil, &lim) // cannot fail for the calling process
		maxConns = controlAPIConnCap(lim.Cur)
	}
	limited := limitControlConns(ln, maxConns)
	srv.ConnState = limited.trackState
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limited) }()
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
