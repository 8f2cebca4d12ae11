package platform

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A sandbox that shares the host's network (--host-network) reaches every other sandbox's
// Runtime API on loopback: one function could take another's next event and answer in its place
// (issue #29). On Lambda the Runtime API is the execution environment's alone, so on the host
// network each instance's listener accepts only connections whose socket belongs to its
// sandbox's uid (identity.go gives each sandbox its own), looked up in the kernel's socket
// table (/proc/net/tcp: the connecting socket's owner) at accept. Others are closed unanswered.
// In a network namespace of its own (the default) the listener is inside it and nobody else
// reaches it; plain processes (--isolation none) share one uid and are not isolated at all.

// runtimeAPIOwnerWait bounds how long an accepted connection waits for its sandbox's uid to be
// known: the runtime connects once the sandbox starts, which is after the uid is assigned, so
// this is only a guard.
const runtimeAPIOwnerWait = 5 * time.Second

// ownerListener accepts only connections from the owner's uid.
type ownerListener struct {
	net.Listener
	owner *runtimeAPIOwner
}

// runtimeAPIOwner is the uid a Runtime API serves, set once when the sandbox has one.
type runtimeAPIOwner struct {
	uid   atomic.Int64 // -1 until set
	known chan struct{}
}

func newRuntimeAPIOwner() *runtimeAPIOwner {
	o := &runtimeAPIOwner{known: make(chan struct{})}
	o.uid.Store(-1)
	return o
}

// set records the sandbox's uid; the first call wins.
func (o *runtimeAPIOwner) set(uid int) {
	if o.uid.CompareAndSwap(-1, int64(uid)) {
		close(o.known)
	}
}

// serveUID is where the sandbox's uid reaches the instance (SandboxOptions.OnUID): its host-side
// Runtime API, if it checks owners, serves that uid from now on.
func (in *Instance) serveUID(uid int) {
	if in.owner != nil {
		in.owner.set(uid)
	}
}

func (l *ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.owns(c) {
			return c, nil
		}
		c.Close()
	}
}

// owns reports whether the connection's peer socket belongs to the owner's uid.
func (l *ownerListener) owns(c net.Conn) bool {
	select {
	case <-l.owner.known:
	case <-time.After(runtimeAPIOwnerWait):
		return false
	}
	uid, err := loopbackPeerUID(c.RemoteAddr(), c.LocalAddr())
	return err == nil && uid == int(l.owner.uid.Load())
}

// loopbackPeerUID finds the uid owning the socket at peer that is connected to local, both on
// this network namespace's IPv4 loopback, in /proc/net/tcp.
func loopbackPeerUID(peer, local net.Addr) (int, error) {
	want, err := procNetTCPPair(peer, local)
	if err != nil {
		return -1, err
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return -1, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1]+" "+fields[2] != want {
			continue
		}
		return strconv.Atoi(fields[7])
	}
	return -1, fmt.Errorf("no socket %s in /proc/net/tcp", want)
}

// procNetTCPPair is the "local remote" address pair of peer's socket as /proc/net/tcp writes it
// (hex IPv4 in the host's byte order, hex port).
func procNetTCPPair(peer, local net.Addr) (string, error) {
	hexAddr := func(a net.Addr) (string, error) {
		t, ok := a.(*net.TCPAddr)
		ip := t.IP.To4()
		if !ok || ip == nil {
			return "", fmt.Errorf("%v is not an IPv4 TCP address", a)
		}
		// little-endian hosts (amd64, arm64) print the 32-bit address reversed
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], t.Port), nil
	}
	p, err := hexAddr(peer)
	if err != nil {
		return "", err
	}
	l, err := hexAddr(local)
	return p + " " + l, err
}
