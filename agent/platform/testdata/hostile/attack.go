package main

// The "attack" operation of bench/soak_hostile.py: one invocation adds keys to its user and
// session keyrings and looks for its twin's, takes every inotify instance it can, tries
// unshare, mount, keyctl, clone(CLONE_NEWUSER), ptrace and `unshare -Urm`, and floods the
// Runtime API with connections each asking for /next; after the response the runtime leaves one
// more CPU spinner behind (request max_spinners, see main.go). Written with raw system calls as
// the bench first had it; moved here so that the soak and the isolation tests deploy one runtime.

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// runtimeAPI is the Runtime API's host:port ($AWS_LAMBDA_RUNTIME_API), which flood dials.
var runtimeAPI string

// spinners are the background spinners this runtime left behind (at most max_spinners).
var spinners []*exec.Cmd

// leaveSpinner starts one more background CPU spinner, up to max (they run whenever the sandbox
// does); 0 leaves none.
func leaveSpinner(max int) {
	if len(spinners) < max {
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = []string{"HOSTILE_SPIN=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if cmd.Start() == nil {
			spinners = append(spinners, cmd)
		}
	}
}

func errnoText(e syscall.Errno) string {
	if e == 0 {
		return "ok"
	}
	return errText(e)
}

func cstr(s string) uintptr { p, _ := syscall.BytePtrFromString(s); return uintptr(unsafe.Pointer(p)) }

const (
	keySpecSession = ^uintptr(2) // -3
	keySpecUser    = ^uintptr(3) // -4
	keySpecUserSes = ^uintptr(4) // -5
)

func addKey(desc string, ring uintptr) string {
	payload := []byte("secret")
	_, _, e := syscall.Syscall6(syscall.SYS_ADD_KEY, cstr("user"), cstr(desc), uintptr(unsafe.Pointer(&payload[0])),
		uintptr(len(payload)), ring, 0)
	return errnoText(e)
}

// attack is the soak's one operation: every attempt at once, reported together (no "gid", so
// the bench tallies the same keys it always did).
func attack(req request) map[string]any {
	res := map[string]any{"uid": os.Getuid()}
	// keyrings: add a key where a neighbour could find it; look for the twin's key
	res["add_key_user"] = addKey(req.AddDesc, keySpecUser)
	res["add_key_session"] = addKey(req.AddDesc, keySpecSession)
	found := false
	for _, ring := range []uintptr{keySpecUser, keySpecSession, keySpecUserSes} {
		r, _, e := syscall.Syscall6(syscall.SYS_KEYCTL, 10 /* KEYCTL_SEARCH */, ring, cstr("user"), cstr(req.FindDesc), 0, 0)
		if e == 0 && int(r) > 0 {
			found = true
		}
		res["keyctl_search"] = errnoText(e)
	}
	keys, err := os.ReadFile("/proc/keys")
	res["proc_keys"] = errText(err)
	res["proc_keys_lines"] = strings.Count(string(keys), "\n")
	res["found_twin_key"] = found || strings.Contains(string(keys), req.FindDesc)
	// inotify: take every instance this user may have, keep them
	took := 0
	for {
		fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
		if err != nil {
			res["inotify_stop"] = errText(err)
			break
		}
		hoard = append(hoard, fd)
		took++
	}
	res["inotify_took"], res["inotify_held"] = took, len(hoard)
	// namespaces, mounts, tracing
	res["unshare_user"] = errText(syscall.Unshare(syscall.CLONE_NEWUSER))
	res["unshare_mount"] = errText(syscall.Unshare(syscall.CLONE_NEWNS))
	os.MkdirAll("/tmp/hostile-mnt", 0o755)
	res["mount"] = errText(syscall.Mount("tmpfs", "/tmp/hostile-mnt", "tmpfs", 0, ""))
	res["umount"] = errText(syscall.Unmount("/tmp", syscall.MNT_DETACH))
	_, _, e := syscall.Syscall(syscall.SYS_KEYCTL, 0 /* KEYCTL_GET_KEYRING_ID */, keySpecSession, 0)
	res["keyctl"] = errnoText(e)
	pid, _, e := syscall.RawSyscall(syscall.SYS_CLONE, uintptr(syscall.CLONE_NEWUSER|syscall.CLONE_NEWNS|syscall.SIGCHLD), 0, 0)
	if e == 0 && pid == 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	if e == 0 {
		var ws syscall.WaitStatus
		syscall.Wait4(int(pid), &ws, 0, nil)
	}
	res["clone_newuser"] = errnoText(e)
	res["ptrace"] = ptraceOwnChild()
	out, err := exec.Command("/usr/bin/unshare", "-Urm", "id", "-u").CombinedOutput()
	cmdOut := strings.TrimSpace(string(out))
	if i := strings.LastIndex(cmdOut, ": "); i >= 0 {
		cmdOut = cmdOut[i+2:] // the reason, without the pid-dependent prefix
	}
	res["unshare_cmd"] = cmdOut + " / " + errText(err)
	// the Runtime API: as many connections as it lets us open, each asking for /next
	res["flood"] = flood(req.Flood)
	res["spinners_alive"] = len(spinners)
	return res
}

func flood(n int) map[string]int {
	got := map[string]int{}
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", runtimeAPI, time.Second)
		if err != nil {
			got["dial:"+errText(unwrap(err))]++
			continue
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := io.WriteString(c, "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			got["write:"+errText(unwrap(err))]++
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			line, err := bufio.NewReader(c).ReadString('\n')
			key := "other"
			switch {
			case strings.HasPrefix(line, "HTTP/1.1 "):
				key = strings.Fields(line)[1]
			case err != nil && strings.Contains(err.Error(), "timeout"):
				key = "no answer in 0.5 s (a waiting /next)"
			case err != nil:
				key = "read:" + errText(unwrap(err))
			}
			c.Close()
			mu.Lock()
			got[key]++
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	return got
}

func unwrap(err error) error {
	for {
		switch e := err.(type) {
		case *net.OpError:
			err = e.Err
		case *os.SyscallError:
			err = e.Err
		default:
			return err
		}
	}
}
