package main

// Sending a member as one write of HTTP/1.1 on its own connection.

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// wire is the request as one write: request line, headers, Content-Length, body.
func wire(r *request) []byte {
	var b bytes.Buffer
	b.Grow(512 + len(r.Body))
	method := r.Method
	if method == "" {
		method = "POST"
	}
	b.WriteString(method + " " + r.Target + " HTTP/1.1\r\n")
	hasHost, hasLen := false, false
	for _, h := range r.Headers {
		switch strings.ToLower(h[0]) {
		case "host":
			hasHost = true
		case "content-length":
			hasLen = true
		}
	}
	if !hasHost {
		b.WriteString("Host: " + r.Host + "\r\n")
	}
	for _, h := range r.Headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	if !hasLen && (len(r.Body) > 0 || method == "POST" || method == "PUT") {
		b.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

// run sends one member at its instant and reads its reply.
func (d *dispatcher) run(m *member) {
	defer d.resolveMember(m.req.K)
	res := &result{K: m.req.K, ScheduledNs: m.at.UnixNano()}
	if d.h2cFor(m.req) {
		d.runH2C(m, res)
		return
	}
	if m.pre {
		// connect ahead of the instant (members due later than connect_ahead after the start)
		if m.connected == nil {
			m.connected = make(chan struct{})
			ahead := time.Until(m.at.Add(-time.Duration(d.cfg.ConnectAheadNs)))
			if ahead > 0 {
				t := time.NewTimer(ahead)
				select {
				case <-t.C:
				case <-d.stopCh:
					t.Stop()
					d.markUnsent(m)
					return
				}
			}
			m.conn, m.connErr = d.dial(m.req, true)
			close(m.connected)
		}
		<-m.connected
	}
	if !d.waitForInstant(m) {
		if m.conn != nil {
			m.conn.c.Close()
		}
		return
	}
	cc := m.conn
	res.Connection = "reused"
	if cc == nil || cc.dead() {
		// not pre-opened, its pre-connection failed, or the server closed it before anything
		// was written: (re)connect now; nothing has been sent yet
		if cc != nil {
			cc.c.Close()
			res.Connection = "redialed"
		} else {
			res.Connection = "new"
		}
		var err error
		cc, err = d.dial(m.req, false) // at the instant: no warm-up
		if err != nil {
			res.Transport = "never_sent"
			res.Error = connectError(err)
			res.EndNs = time.Now().UnixNano()
			d.emit(res)
			return
		}
	}
	defer cc.c.Close()
	// the send time is taken as the request is handed to the kernel: on loopback the write
	// itself runs the receiving side's TCP stack, and the receiver may read it before the
	// write returns
	now := time.Now()
	res.SendNs = now.UnixNano()
	n, err := cc.c.Write(m.wire)
	if err != nil {
		res.EndNs = time.Now().UnixNano()
		if n == 0 {
			res.Transport = "never_sent"
			res.SendNs = 0
			res.Error = &errInfo{Type: "EndpointConnectionError", Stage: "write",
				Message: "the connection failed before any byte of the request was written: " + err.Error()}
		} else {
			res.Transport = "may_have_run"
			res.Error = &errInfo{Type: "MayHaveRun.ConnectionClosedError", Stage: "write",
				Message: fmt.Sprintf("the connection failed after %d of %d bytes were written: %v", n, len(m.wire), err)}
		}
		d.sent.Add(1)
		d.emit(res)
		return
	}
	d.sent.Add(1)
	if d.cfg.ReadTimeoutNs > 0 {
		cc.c.SetReadDeadline(now.Add(time.Duration(d.cfg.ReadTimeoutNs)))
	}
	<-cc.peeked
	if cc.peekErr != nil {
		d.readFailed(res, cc.peekErr)
		return
	}
	res.FirstByteNs = cc.firstByteNs
	resp, err := http.ReadResponse(cc.br, &http.Request{Method: m.req.Method})
	if err != nil {
		d.readFailed(res, err)
		return
	}
	res.HeadersNs = time.Now().UnixNano()
	d.readReply(res, resp)
}
