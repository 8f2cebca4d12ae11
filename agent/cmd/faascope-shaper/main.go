// Command faascope-shaper puts the cloud's request latency and request-rate limits in front of
// the local storage stand-ins (package shaper): one listener per route of its JSON
// configuration, which faascope writes from a calibration table (faascope standins start
// --shape lambda, or faascope run for a local campaign with a cloud-like profile).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/faascope/faascope/agent/shaper"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("faascope-shaper", flag.ContinueOnError)
	config := fs.String("config", "", "JSON configuration: {seed, routes: [{listen, backend, service, write, read, write_rate, read_rate}]}")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *config == "" {
		fmt.Fprintln(os.Stderr, "faascope-shaper: --config is required")
		return 2
	}
	cfg, err := shaper.LoadConfig(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faascope-shaper:", err)
		return 2
	}
	sampler := shaper.NewSampler(cfg.Seed)
	var servers []*http.Server
	var handlers []*shaper.Handler
	for _, r := range cfg.Routes {
		h, err := shaper.NewHandler(r, sampler)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faascope-shaper:", err)
			return 2
		}
		ln, err := net.Listen("tcp", r.Listen)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faascope-shaper:", err)
			return 1
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
		servers = append(servers, srv)
		handlers = append(handlers, h)
		mu, sigma := r.Write.Lognormal()
		log.Printf("%s: %s -> %s (write lognormal mu=%.4f sigma=%.4f)", r.Service, ln.Addr(), r.Backend, mu, sigma)
		go func() {
			if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
				log.Printf("%s: %v", r.Listen, err)
			}
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, s := range servers {
		s.Shutdown(ctx)
		st := &handlers[i].Stats
		log.Printf("%s: reads %d, writes %d, unshaped %d, slowdowns %d", cfg.Routes[i].Listen,
			st.Reads.Load(), st.Writes.Load(), st.Unshaped.Load(), st.SlowDowns.Load())
	}
	return 0
}
