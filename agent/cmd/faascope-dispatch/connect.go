package main

// Opening a member's HTTP/1.1 connection: resolving its address, dialling (TLS for https), the
// warm-up request, and watching the connection until the request is written.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one member's connection and the goroutine that waits for its first byte: if that
// arrives (or the connection ends) before the request was written, the server closed it or
// spoke first, and the member re-connects before sending.
type conn struct {
	c           net.Conn
	br          *bufio.Reader
	peeked      chan struct{}
	firstByteNs int64
	peekErr     error
}

func newConn(c net.Conn, br *bufio.Reader) *conn {
	if br == nil {
		br = bufio.NewReaderSize(c, 8192)
	}
	cc := &conn{c: c, br: br, peeked: make(chan struct{})}
	go func() {
		_, err := cc.br.Peek(1)
		cc.firstByteNs = time.Now().UnixNano()
		cc.peekErr = err
		close(cc.peeked)
	}()
	return cc
}

func (cc *conn) dead() bool {
	select {
	case <-cc.peeked:
		return true
	default:
		return false
	}
}

type addrs struct {
	once sync.Once
	list []string
	err  error
	next atomic.Uint64
}

// address returns the next resolved address for host:port (resolved once, round robin over its
// addresses, as a pool spreads its connections).
func (d *dispatcher) address(addr string) (string, error) {
	v, _ := d.resolve.LoadOrStore(addr, &addrs{})
	a := v.(*addrs)
	a.once.Do(func() {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			a.err = err
			return
		}
		if ip := net.ParseIP(host); ip != nil {
			a.list = []string{addr}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(d.cfg.ConnectTimeoutNs))
		defer cancel()
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			a.err = err
			return
		}
		for _, ip := range ips { // IPv4 first: IPv6 is often unroutable where v4 works
			if ip.IP.To4() != nil {
				a.list = append(a.list, net.JoinHostPort(ip.IP.String(), port))
			}
		}
		for _, ip := range ips {
			if ip.IP.To4() == nil {
				a.list = append(a.list, net.JoinHostPort(ip.IP.String(), port))
			}
		}
		if len(a.list) == 0 {
			a.err = fmt.Errorf("no address for %s", host)
		}
	})
	if a.err != nil {
		return "", a.err
	}
	return a.list[int(a.next.Add(1)-1)%len(a.list)], nil
}

// dial opens a connection for “r“ (TCP, then TLS for https); with “warm“ it also sends r's
// warm-up request on it and reads the reply.
func (d *dispatcher) dial(r *request, warm bool) (*conn, error) {
	timeout := time.Duration(d.cfg.ConnectTimeoutNs)
	addr, err := d.address(r.Addr)
	if err != nil {
		return nil, err
	}
	dl := net.Dialer{Timeout: timeout}
	c, err := dl.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if r.Scheme == "https" {
		host, _, _ := net.SplitHostPort(r.Addr)
		cfg := d.tlsCfg.Clone()
		cfg.ServerName = host
		tc := tls.Client(c, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	var br *bufio.Reader
	if warm && r.Warm != nil {
		br = bufio.NewReaderSize(c, 8192)
		c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.Write(wire(r.Warm)); err != nil {
			c.Close()
			return nil, err
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: r.Warm.Method})
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err == nil && (resp.Close || resp.StatusCode >= 500) {
			err = fmt.Errorf("the warm-up request got %s", resp.Status)
		}
		if err != nil {
			c.Close()
			return nil, err
		}
		c.SetDeadline(time.Time{})
	}
	return newConn(c, br), nil
}
