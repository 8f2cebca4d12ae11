package platform

import (
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// RuntimeAPIPort is where the Runtime API appears inside a sandbox, as on Lambda.
const RuntimeAPIPort = 9001

// portMap exposes Target (an address in the host's network) at 127.0.0.1:Inside in a sandbox,
// or, with Serve, hands the listener at 127.0.0.1:Inside to a server of the platform's own (the
// Runtime API: its connections are accepted in the sandbox's namespace and served by the
// platform's goroutines, with no relay and no second socket on the host).
type portMap struct {
	Inside int
	Target string
	Shaped bool
	Serve  func(net.Listener)
}

// sandboxNet is a sandbox's private network: a namespace with only loopback, in which the
// platform listens for the few services the function may reach: the Runtime API, served there
// directly, and exposed ports, relayed to the host.
// Services keep their loopback addresses, nothing else is reachable (the platform's control
// API included), and every byte passes a token bucket, as a Firecracker VM's device does.
type sandboxNet struct {
	listeners []net.Listener
	in, out   *limiter
	mu        sync.Mutex
	conns     map[net.Conn]struct{}
	closed    bool
	BytesIn   int64
	BytesOut  int64
}

func setupSandboxNet(pid int, maps []portMap, shape NetShape) (*sandboxNet, error) {
	sn := &sandboxNet{in: newLimiter(shape.In), out: newLimiter(shape.Out), conns: map[net.Conn]struct{}{}}
	var lns []net.Listener
	err := inNetns(pid, func() error {
		if err := loopbackUp(); err != nil {
			return err
		}
		for _, m := range maps {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(m.Inside))
			if err != nil {
				return fmt.Errorf("listen on port %d in the sandbox: %w", m.Inside, err)
			}
			lns = append(lns, ln)
		}
		return nil
	})
	sn.listeners = lns
	if err != nil {
		sn.Close()
		return nil, err
	}
	for i, m := range maps {
		ln := limitRuntimeAPIListener(lns[i], m) // limits.go: bounded connections per sandbox
		if m.Serve != nil {
			go m.Serve(ln)
			continue
		}
		go sn.serve(ln, m)
	}
	return sn, nil
}

// inNetns runs fn on a thread that has joined pid's network namespace. Sockets fn creates stay
// in that namespace. If the thread cannot return to ours it is left locked, so Go retires it.
func inNetns(pid int, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
		if err != nil {
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter the sandbox's network: %w", err)
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leave the sandbox's network: %w", err)
			return // thread stays locked and dies with this goroutine
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("read lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

func (sn *sandboxNet) serve(ln net.Listener, m portMap) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go sn.relay(c, m)
	}
}

func (sn *sandboxNet) track(c net.Conn, add bool) bool {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if add {
		if sn.closed {
			return false
		}
		sn.conns[c] = struct{}{}
	} else {
		delete(sn.conns, c)
	}
	return true
}

func (sn *sandboxNet) relay(inside net.Conn, m portMap) {
	defer inside.Close()
	// Under heavy load a loopback dial can fail transiently (ephemeral ports in TIME_WAIT, a
	// full accept queue); retry briefly before cutting the sandbox's connection.
	var outside net.Conn
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if outside, err = net.Dial("tcp", m.Target); err == nil {
			break
		}
		time.Sleep(time.Duration(10<<attempt) * time.Millisecond)
	}
	if err != nil {
		log.Printf("sandbox relay to %s failed: %v", m.Target, err)
		return
	}
	defer outside.Close()
	if !sn.track(inside, true) || !sn.track(outside, true) {
		return
	}
	defer sn.track(inside, false)
	defer sn.track(outside, false)
	var out, in *limiter
	if m.Shaped {
		out, in = sn.out, sn.in
	}
	done := make(chan struct{}, 2)
	go func() { sn.copy(outside, inside, out, &sn.BytesOut); closeWrite(outside); done <- struct{}{} }()
	go func() { sn.copy(inside, outside, in, &sn.BytesIn); closeWrite(inside); done <- struct{}{} }()
	<-done
	<-done
}

// copy moves bytes through the direction's limiter. Chunks are small (16 KiB) so that a
// blocked bucket delays traffic smoothly rather than in large steps.
func (sn *sandboxNet) copy(dst io.Writer, src io.Reader, l *limiter, count *int64) {
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if l != nil {
				l.take(int64(n))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			sn.mu.Lock()
			*count += int64(n)
			sn.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok { // also a limitedConn (limits.go)
		tc.CloseWrite()
	}
}

// Close stops the listeners and cuts every relayed connection.
func (sn *sandboxNet) Close() {
	if sn == nil {
		return
	}
	for _, ln := range sn.listeners {
		ln.Close()
	}
	sn.mu.Lock()
	sn.closed = true
	for c := range sn.conns {
		c.Close()
	}
	sn.mu.Unlock()
}

// PortMapping exposes host loopback port Host at 127.0.0.1:Inside in a sandbox.
type PortMapping struct {
	Inside, Host int
}

// ParsePorts reads a comma-separated list of ports: "9000" exposes host port 9000 at the same
// port inside; "9002:9001" exposes host port 9001 at 9002 inside (the platform's own API, say,
// whose default port the Runtime API takes inside every sandbox).
func ParsePorts(s string) ([]PortMapping, error) {
	var out []PortMapping
	port := func(f string) (int, error) {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 || p > 65535 {
			return 0, fmt.Errorf("%q is not a port between 1 and 65535", f)
		}
		return p, nil
	}
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		in, host, mapped := strings.Cut(f, ":")
		i, err := port(in)
		if err != nil {
			return nil, err
		}
		h := i
		if mapped {
			if h, err = port(host); err != nil {
				return nil, err
			}
		}
		if i == RuntimeAPIPort {
			return nil, fmt.Errorf("port %d inside a sandbox is the Runtime API's; map the host port elsewhere, e.g. \"9002:%d\"", RuntimeAPIPort, h)
		}
		if seen[i] {
			return nil, fmt.Errorf("inside port %d is listed twice", i)
		}
		seen[i] = true
		out = append(out, PortMapping{Inside: i, Host: h})
	}
	return out, nil
}
