// Command hostile is a Lambda custom runtime that does what a hostile or careless function
// would: it adds kernel keys, hoards inotify instances, tries to create namespaces, mount,
// trace and load BPF, leaves CPU spinners behind, and reports what the sandbox let it do. The
// platform's isolation tests (isolation_test.go) and the hostile-neighbour soak
// (bench/soak_hostile.py, operation "attack") build it with CGO_ENABLED=0 and deploy it.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

type request struct {
	Op      string   `json:"op"`
	Desc    string   `json:"desc"`
	N       int      `json:"n"`
	Threads int      `json:"threads"`
	Paths   []string `json:"paths"`
	Path    string   `json:"path"`
	// the "attack" operation (attack.go, bench/soak_hostile.py)
	AddDesc     string `json:"add_desc"`
	FindDesc    string `json:"find_desc"`
	Flood       int    `json:"flood"`
	MaxSpinners int    `json:"max_spinners"`
}

var hoard []int // inotify descriptors kept open for the life of the runtime

func main() {
	if os.Getenv("HOSTILE_SPIN") == "1" { // a background spinner left behind by an invocation
		x := uint64(1)
		for {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	runtimeAPI = os.Getenv("AWS_LAMBDA_RUNTIME_API")
	api := "http://" + runtimeAPI + "/2018-06-01/runtime/invocation/"
	for {
		resp, err := http.Get(api + "next")
		if err != nil {
			fmt.Fprintln(os.Stderr, "next:", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		id := resp.Header.Get("Lambda-Runtime-Aws-Request-Id")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var req request
		json.Unmarshal(body, &req)
		out, _ := json.Marshal(handle(req))
		r, err := http.Post(api+id+"/response", "application/json", bytes.NewReader(out))
		if err == nil {
			r.Body.Close()
		}
		// after the response: one more spinner left behind (the soak's max_spinners; none otherwise)
		leaveSpinner(req.MaxSpinners)
	}
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	if errno, ok := err.(syscall.Errno); ok {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func handle(req request) map[string]any {
	if req.Op == "attack" {
		return attack(req)
	}
	res := map[string]any{"uid": os.Getuid(), "gid": os.Getgid()}
	switch req.Op {
	case "id":
		s, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
		res["session_keyring"], res["session_keyring_err"] = s, errText(err)
	case "addkey":
		_, err := unix.AddKey("user", req.Desc, []byte("secret"), unix.KEY_SPEC_USER_KEYRING)
		res["user"] = errText(err)
		_, err = unix.AddKey("user", req.Desc, []byte("secret"), unix.KEY_SPEC_SESSION_KEYRING)
		res["session"] = errText(err)
	case "findkey":
		found := false
		for _, ring := range []int{unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_SESSION_KEYRING, unix.KEY_SPEC_USER_SESSION_KEYRING} {
			if _, err := unix.KeyctlSearch(ring, "user", req.Desc, 0); err == nil {
				found = true
			}
		}
		keys, _ := os.ReadFile("/proc/keys")
		res["found"] = found || strings.Contains(string(keys), req.Desc)
	case "inotify-hog":
		var err error
		for {
			var fd int
			if fd, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
				break
			}
			hoard = append(hoard, fd)
		}
		res["count"], res["err"] = len(hoard), errText(err)
	case "inotify":
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err == nil {
			unix.Close(fd)
		}
		res["err"] = errText(err)
	case "syscalls":
		res["calls"] = tryForbidden()
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "CapBnd:") || strings.HasPrefix(line, "Seccomp:") {
				f := strings.Fields(line)
				res[strings.TrimSuffix(f[0], ":")] = f[1]
			}
		}
		out, err := exec.Command("/usr/bin/unshare", "-Urm", "id", "-u").CombinedOutput()
		res["unshare_cmd"] = strings.TrimSpace(string(out)) + " / " + errText(err)
		// what the socket rule must leave alone
		res["socket_inet"], res["socket_unix"] = errText(trySocket(unix.AF_INET)), errText(trySocket(unix.AF_UNIX))
	case "spawn-spinner":
		for i := 0; i < req.N; i++ {
			cmd := exec.Command("/proc/self/exe")
			cmd.Env = []string{"HOSTILE_SPIN=1"}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				res["err"] = errText(err)
			}
		}
	case "spin":
		// req.Threads goroutines each do req.N steps; elapsed_s is the wall time of all.
		t0 := time.Now()
		var wg sync.WaitGroup
		sums := make([]uint64, max(req.Threads, 1))
		for t := range sums {
			wg.Add(1)
			go func() {
				defer wg.Done()
				x := uint64(t + 1)
				for i := 0; i < req.N; i++ {
					x = x*6364136223846793005 + 1442695040888963407
				}
				sums[t] = x
			}()
		}
		wg.Wait()
		res["elapsed_s"], res["x"] = time.Since(t0).Seconds(), sums
	case "stat":
		exists := map[string]bool{}
		for _, p := range req.Paths {
			_, err := os.Lstat(p)
			exists[p] = err == nil
		}
		res["exists"] = exists
		var etc []string
		entries, _ := os.ReadDir("/etc")
		for _, e := range entries {
			etc = append(etc, e.Name())
		}
		res["etc"] = etc
		passwd, _ := os.ReadFile("/etc/passwd")
		res["passwd"] = string(passwd)
		res["hostname_lookup"] = lookupOK()
	case "read":
		// what each path holds: its bytes (a file) or entries (a directory), or the error
		got := map[string]any{}
		for _, p := range req.Paths {
			if entries, err := os.ReadDir(p); err == nil {
				got[p] = map[string]any{"entries": len(entries)}
			} else if b, err := os.ReadFile(p); err == nil {
				got[p] = map[string]any{"bytes": len(b)}
			} else {
				if pe, ok := err.(*os.PathError); ok {
					err = pe.Err
				}
				got[p] = map[string]any{"err": errText(err)}
			}
		}
		res["read"] = got
	case "print":
		// req.N numbered lines ("%09d\n", 10 bytes each) on stdout, as a function that logs a lot
		var buf []byte
		for i := 0; i < req.N; i++ {
			buf = fmt.Appendf(buf, "%09d\n", i)
			if len(buf) >= 32<<10 || i == req.N-1 {
				os.Stdout.Write(buf)
				buf = buf[:0]
			}
		}
	case "write":
		f, err := os.OpenFile(req.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			_, err = f.WriteString("written")
			f.Close()
		}
		res["err"] = errText(err)
	case "unlink":
		res["err"] = errText(os.Remove(req.Path))
	case "noop":
	default:
		res["err"] = "unknown op " + req.Op
	}
	return res
}

// lookupOK says whether localhost resolves through the sandbox's /etc (hosts, nsswitch.conf).
func lookupOK() bool {
	b, err := os.ReadFile("/etc/hosts")
	return err == nil && strings.Contains(string(b), "localhost")
}

// tryForbidden attempts what a function must not do and reports each errno.
func tryForbidden() map[string]string {
	r := map[string]string{}
	r["unshare_user"] = errText(unix.Unshare(unix.CLONE_NEWUSER))
	r["unshare_mount"] = errText(unix.Unshare(unix.CLONE_NEWNS))
	os.MkdirAll("/tmp/hostile-mnt", 0o755)
	r["mount"] = errText(unix.Mount("tmpfs", "/tmp/hostile-mnt", "tmpfs", 0, ""))
	r["umount"] = errText(unix.Unmount("/tmp", unix.MNT_DETACH))
	_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	r["keyctl"] = errText(err)
	_, err = unix.AddKey("user", "hostile", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	r["add_key"] = errText(err)
	// ptrace a child of our own (same uid, so only a policy can refuse it).
	r["ptrace"] = ptraceOwnChild()
	// clone(CLONE_NEWUSER|SIGCHLD) straight, as unshare(1) and runc's nsexec would.
	pid, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.CLONE_NEWUSER|unix.CLONE_NEWNS|uintptr(syscall.SIGCHLD)), 0, 0)
	if errno == 0 && pid == 0 {
		unix.Exit(0)
	}
	if errno == 0 {
		var ws unix.WaitStatus
		unix.Wait4(int(pid), &ws, 0, nil)
		r["clone_newuser"] = "ok"
	} else {
		r["clone_newuser"] = errText(errno)
	}
	attr := make([]byte, 128)
	_, _, errno = unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr[0])), 128)
	r["bpf"] = errText(errOrNil(errno))
	_, _, errno = unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
	r["userfaultfd"] = errText(errOrNil(errno))
	pattr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK}
	pattr.Size = uint32(unsafe.Sizeof(pattr))
	fd, err := unix.PerfEventOpen(&pattr, 0, -1, -1, 0)
	if err == nil {
		unix.Close(fd)
	}
	r["perf_event_open"] = errText(err)
	// vsock is not confined by the network namespace (seccomp.go refuses the family).
	r["socket_vsock"] = errText(trySocket(unix.AF_VSOCK))
	return r
}

// trySocket opens (and closes) a stream socket of the family.
func trySocket(family int) error {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func errOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// ptraceOwnChild starts a spinning child of our own (same uid, so only a policy can refuse the
// attach) and says what PTRACE_ATTACH to it gave.
func ptraceOwnChild() string {
	child := exec.Command("/proc/self/exe")
	child.Env = []string{"HOSTILE_SPIN=1"}
	if err := child.Start(); err != nil {
		return "start child: " + errText(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	return errText(unix.PtraceAttach(child.Process.Pid))
}
