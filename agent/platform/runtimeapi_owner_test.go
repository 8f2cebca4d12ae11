package platform

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue #29: with sandboxes on the host's network, a function connected to another sandbox's
// Runtime API, took its next event and answered in its place. The host-side listener now serves
// only its sandbox's uid: the sandbox's own runtime still works, a connection from anyone else
// (here the test process, another uid) is closed unanswered and takes nothing.
func TestHostNetworkRuntimeAPIServesOnlyItsSandbox(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{HostNetwork: true})
	tp.create("victim", nil)
	if _, r, body := tp.invoke("victim", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("the sandbox's own runtime: %s", body)
	}
	in := instanceOf(t, tp.Platform, "victim")
	if in.Sandbox == nil || in.Sandbox.Net != nil {
		t.Fatal("want a sandbox on the host's network")
	}
	c, err := net.Dial("tcp", in.RuntimeAPIAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(runtimeAPIOwnerWait + 5*time.Second))
	if _, err := c.Write([]byte("GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n")); err == nil {
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			t.Fatalf("a stranger's /next was answered: %s", resp.Status)
		}
	}
	if _, r, body := tp.invoke("victim", `{"workload":{"kind":"noop"}}`); !r.OK || r.Cold || !strings.HasSuffix(r.Instance.Sandbox, "/"+in.ID) {
		t.Fatalf("after the stranger: %s (want a warm answer from %s)", body, in.ID)
	}
}

// The owner of a loopback socket is found in the kernel's table: this process's own connection.
func TestLoopbackPeerUIDFindsTheConnectingSocketsOwner(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	uid, err := loopbackPeerUID(s.RemoteAddr(), s.LocalAddr())
	if err != nil || uid != os.Getuid() {
		t.Fatalf("uid %d (%v), want %d", uid, err, os.Getuid())
	}
	if _, err := loopbackPeerUID(s.LocalAddr(), s.LocalAddr()); err == nil {
		t.Error("a pair no socket has was found")
	}
}
