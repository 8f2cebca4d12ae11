package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// run is the command (see the protocol in main.go): read the config, start the writer, take
// the initial batch, connect ahead, publish the start, send every member at its instant while
// taking later requests, and report the end. It returns the exit status.
func run(stdin io.Reader, stdout io.Writer) int {
	in := &input{r: bufio.NewReaderSize(stdin, 1<<20)}
	first, err := in.read()
	if err != nil || first.Config == nil {
		fmt.Fprintln(os.Stderr, "faascope-dispatch: the first line must be {\"config\": …}:", err)
		return 2
	}
	d, ok := newDispatcher(*first.Config)
	if !ok {
		return 2
	}
	writerDone := d.startWriter(stdout)
	initial, err := in.readInitial()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faascope-dispatch: input ended before {\"go\": true}:", err)
		return 2
	}
	members, ready, connected, failed := d.connectAhead(initial)
	if d.cfg.AbortIfUnreachable && connected == 0 && failed > 0 {
		d.reportUnreachable(ready, members)
		close(d.out)
		<-writerDone
		return 0
	}
	d.startSchedule(ready, members)
	driverGone := d.readLater(in)
	if d.cfg.Total <= 0 {
		d.doneOnce.Do(func() { close(d.allDone) })
	} else {
		d.mu.Lock()
		d.checkDoneLocked()
		d.mu.Unlock()
	}
	select {
	case <-d.allDone:
	case <-driverGone:
	}
	select {
	case <-driverGone:
		return 3 // nobody records what comes back: leave at once, in-flight replies unread
	default:
	}
	d.reportDone()
	close(d.out)
	<-writerDone
	return 0
}

// input reads the driver's JSON lines from stdin.
type input struct{ r *bufio.Reader }

// read is the next message; an error at the end of the input or on a line that is not JSON.
func (in *input) read() (*message, error) {
	line, err := in.r.ReadBytes('\n')
	if len(bytes.TrimSpace(line)) == 0 {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	var m message
	if e := json.Unmarshal(line, &m); e != nil {
		return nil, fmt.Errorf("bad input line: %v", e)
	}
	return &m, nil
}

// readInitial is the initial batch, until {"go": true}.
func (in *input) readInitial() ([]*request, error) {
	var initial []*request
	for {
		m, err := in.read()
		if err != nil {
			return nil, err
		}
		if m.Target != "" {
			r := m.request
			initial = append(initial, &r)
		}
		if m.Go {
			return initial, nil
		}
	}
}

// newDispatcher is a dispatcher for cfg with its defaults filled in and its TLS set up; false
// (the reason written to stderr) when the CA file cannot be read.
func newDispatcher(cfg config) (*dispatcher, bool) {
	d := &dispatcher{cfg: cfg, out: make(chan any, 4096), stopCh: make(chan struct{}),
		members: map[int]*member{}, allDone: make(chan struct{})}
	if d.cfg.ConnectTimeoutNs <= 0 {
		d.cfg.ConnectTimeoutNs = int64(10 * time.Second)
	}
	if d.cfg.DialParallel <= 0 {
		d.cfg.DialParallel = 128
	}
	if d.cfg.ConnectAheadNs <= 0 {
		d.cfg.ConnectAheadNs = int64(2 * time.Second)
	}
	d.dialSem = make(chan struct{}, d.cfg.DialParallel)
	d.tlsCfg = &tls.Config{NextProtos: []string{"http/1.1"}, ClientSessionCache: tls.NewLRUClientSessionCache(64)}
	if d.cfg.CAFile != "" {
		pem, err := os.ReadFile(d.cfg.CAFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faascope-dispatch: ca_file:", err)
			return nil, false
		}
		pool, _ := x509.SystemCertPool()
		if pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(pem)
		d.tlsCfg.RootCAs = pool
	}
	d.windows = map[int64]*window{}
	return d, true
}

// startWriter starts the writer: results as JSON lines, flushed whenever the queue is empty
// (and held while a send window is open). The returned channel closes once d.out is closed
// and everything in it written.
func (d *dispatcher) startWriter(stdout io.Writer) <-chan struct{} {
	bw := bufio.NewWriterSize(stdout, 1<<16)
	enc := json.NewEncoder(bw)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		var pending []any
		timer := time.NewTimer(time.Hour)
		write := func() {
			for _, v := range pending {
				enc.Encode(v) // an error: the driver is gone, keep draining
			}
			pending = pending[:0]
			bw.Flush()
		}
		for {
			select {
			case v, ok := <-d.out:
				if !ok {
					write()
					return
				}
				if f, isFlush := v.(flushed); isFlush {
					write()
					close(f)
					continue
				}
				pending = append(pending, v)
				if until := d.holdUntil(time.Now()); !until.IsZero() {
					timer.Reset(time.Until(until))
					continue
				}
				if len(d.out) == 0 {
					write()
				}
			case <-timer.C:
				if until := d.holdUntil(time.Now()); !until.IsZero() {
					timer.Reset(time.Until(until))
					continue
				}
				write()
			}
		}
	}()
	return writerDone
}

// connectAhead makes the initial batch's members and connects the members due soon, many at
// once, before the schedule starts (and the h2c connections). ready is the "ready" report
// without its start; connected and failed count the connections opened and not.
func (d *dispatcher) connectAhead(initial []*request) (members []*member, ready map[string]any, connected, failed int64) {
	t0 := time.Now()
	members = make([]*member, 0, len(initial))
	for _, r := range initial {
		members = append(members, d.newMember(r)) // d.start is zero: set by startSchedule
	}
	var wg sync.WaitGroup
	var connectedN, failedN atomic.Int64
	errs := map[string]int{}
	var errMu sync.Mutex
	for _, m := range members {
		if !m.pre || time.Duration(m.req.OffsetNs) >= time.Duration(d.cfg.ConnectAheadNs) || d.h2cFor(m.req) {
			continue
		}
		m.connected = make(chan struct{})
		wg.Add(1)
		d.dialSem <- struct{}{}
		go func(m *member) {
			defer wg.Done()
			defer func() { <-d.dialSem }()
			m.conn, m.connErr = d.dial(m.req, true)
			if m.connErr != nil {
				failedN.Add(1)
				e := connectError(m.connErr)
				errMu.Lock()
				errs[e.Type]++
				errMu.Unlock()
			} else {
				connectedN.Add(1)
			}
			close(m.connected)
		}(m)
	}
	wg.Wait()
	if d.cfg.H2C {
		c, f := d.openH2C(initial, errs)
		connectedN.Add(c)
		failedN.Add(f)
	}
	connectS := time.Since(t0).Seconds()
	connected, failed = connectedN.Load(), failedN.Load()
	ready = map[string]any{"connected": connected, "connect_failed": failed,
		"connect_errors": errs, "connect_s": connectS, "fds": fdCount(), "members": len(members)}
	return members, ready, connected, failed
}

// reportUnreachable reports a dispatch that sends nothing (config abort_if_unreachable): ready
// without a start, every member unsent, done.
func (d *dispatcher) reportUnreachable(ready map[string]any, members []*member) {
	ready["unreachable"] = true
	ready["start_ns"] = nil
	d.emit(map[string]any{"ready": ready})
	keys := make([]int, 0, len(members))
	for _, m := range members {
		keys = append(keys, m.req.K)
	}
	d.emit(map[string]any{"unsent": keys})
	d.emit(map[string]any{"done": map[string]any{"sent": 0, "unsent": len(keys), "stopped": "unreachable", "max_rss_kb": maxRSSKB()}})
}

// startSchedule sets the start, reports ready (flushed before anything can be sent), and
// starts every member of the initial batch.
func (d *dispatcher) startSchedule(ready map[string]any, members []*member) {
	// no garbage collection while sending (a pause would smear the instants): the heap a burst
	// needs is small, and the memory limit still collects if it were not
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	d.start = time.Now().Add(time.Duration(d.cfg.LeadNs))
	ready["start_ns"] = d.start.UnixNano()
	d.emit(map[string]any{"ready": ready})
	// the driver has the start before anything can be sent: a member it has no record of after
	// a crash was sent only if its instant had passed
	f := make(flushed)
	d.emit(f)
	<-f
	sort.SliceStable(members, func(i, j int) bool { return members[i].req.OffsetNs < members[j].req.OffsetNs })
	for _, m := range members {
		m.at = d.start.Add(time.Duration(m.req.OffsetNs))
		d.addWindow(m.at)
	}
	for _, m := range members {
		go d.run(m)
	}
}

// readLater takes the later requests, stop and end in the background; the returned channel
// closes when the input ends before {"end": true} (the driver is gone).
func (d *dispatcher) readLater(in *input) <-chan struct{} {
	driverGone := make(chan struct{})
	go func() {
		for {
			msg, err := in.read()
			if err != nil {
				d.mu.Lock()
				ended := d.ended
				d.mu.Unlock()
				if !ended {
					// EOF before the end: the driver is gone (killed), nobody records what
					// comes back; send nothing more and leave at once
					close(driverGone)
					d.stop("driver_gone")
					fmt.Fprintln(os.Stderr, "faascope-dispatch: the driver closed its pipe before the end; nothing more is sent")
				}
				return
			}
			switch {
			case msg.Stop != "":
				d.stop(msg.Stop)
				// members the driver has not handed over yet will never be sent
				d.mu.Lock()
				d.resolved += d.cfg.Total - d.received
				d.received = d.cfg.Total
				d.checkDoneLocked()
				d.mu.Unlock()
			case msg.End:
				d.mu.Lock()
				d.ended = true
				d.mu.Unlock()
			case msg.Target != "":
				if d.isStopped() {
					continue
				}
				r := msg.request
				m := d.newMember(&r)
				d.addWindow(m.at)
				go d.run(m)
			}
		}
	}()
	return driverGone
}

// reportDone reports, once every member is resolved, the members a stop kept unsent and the
// dispatch's totals.
func (d *dispatcher) reportDone() {
	debug.SetGCPercent(100)
	d.mu.Lock()
	unsent := append([]int(nil), d.unsent...)
	d.mu.Unlock()
	if len(unsent) > 0 {
		sort.Ints(unsent)
		d.emit(map[string]any{"unsent": unsent})
	}
	stopped, _ := d.stopped.Load().(string)
	d.emit(map[string]any{"done": map[string]any{"sent": d.sent.Load(), "unsent": len(unsent),
		"stopped": stopped, "max_rss_kb": maxRSSKB(), "fds": fdCount()}})
}
