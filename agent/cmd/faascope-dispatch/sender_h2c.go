package main

// Sending members as streams of a few HTTP/2 connections without TLS (config h2c).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

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
