package platform

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A spare is a sandbox made ahead of any function: its init process already runs in fresh mount,
// PID, UTS, IPC (and network) namespaces, in a cgroup of its own with no limits yet, as a uid of
// its own with its own /etc, and waits on its gate pipe. A cold start claims one and only adds
// what is the function's: the code's directory, /tmp, the cgroup's limits, the relayed ports, and
// the spec it sends through the gate; the init then mounts the root and execs the bootstrap.
//
// What this takes off a cold start is the kernel's and the runtime's fixed cost of a sandbox:
// clone with five namespace flags, the exec of the platform binary and its Go runtime's start,
// five cgroup directories, and above all moving the process into them, which on cgroup v1 waits
// for an RCU grace period (cgroup_threadgroup_rwsem: milliseconds, tens on a loaded machine).
// A spare is used once (claimed by one cold start, destroyed with that instance), so nothing of
// one function ever reaches another. Spares are refilled in the background, a moment after a
// claim, so the refill does not compete with the cold start being measured; when none is ready
// (a burst), the cold start makes its own the same way, on its critical path.

// spareOptions are what every sandbox of the platform shares.
type spareOptions struct {
	Dir         string // the spare's own directory (its etc/), renamed into the sandbox's at claim
	CgroupGroup string
	ID          string // the cgroup's name
	Network     bool   // a network namespace of its own
	SharedDir   string
	// Sources are the host directories sandboxes are built from (the data and shared
	// directories): the spare's mount namespace keeps only these and the system's (sparemounts.go).
	Sources []string
}

type spare struct {
	dir      string
	identity *sandboxIdentity
	cgroup   *Cgroup
	cmd      *exec.Cmd
	pid      int      // the init's; its exit is collected by the reaper (reaper.go)
	gate     *os.File // the spec goes here; closing it without one ends the init
	reportFD int
	// closeSock is the platform's end of the socket the init hands a close listener over
	// (closecost.go), closeFD the init's descriptor of the other end.
	closeSock   *os.File
	closeFD     int
	sharedIDMap bool
	report      chan initReport
	out         *switchWriter
	outR        *os.File     // the read end of the sandbox's stdout/stderr pipe
	copied      atomic.Int64 // bytes copied from outR to out so far
	outDone     chan struct{}
	exited      chan struct{}
	exitErr     error
}

func (sp *spare) uid() int { return sp.identity.UID }

// spawnSpare makes a spare, marking its steps on st (nil: not measured).
func spawnSpare(o spareOptions, st *stepTimer) (sp *spare, err error) {
	sp = &spare{dir: o.Dir, exited: make(chan struct{}), report: make(chan initReport, 1),
		out: &switchWriter{}, outDone: make(chan struct{})}
	defer func() {
		if err != nil {
			sp.destroy()
		}
	}()
	if sp.identity, err = allocateIdentity(); err != nil {
		return sp, err
	}
	etc := filepath.Join(o.Dir, "etc")
	if err = os.MkdirAll(etc, 0o755); err != nil {
		return sp, err
	}
	if err = writeSandboxEtc(etc, sp.uid(), filepath.Base(o.Dir)); err != nil {
		return sp, fmt.Errorf("sandbox /etc: %w", err)
	}
	st.mark("identity_etc")
	if sp.cgroup, err = NewCgroup(o.CgroupGroup, o.ID, Limits{}); err != nil {
		return sp, err
	}
	st.mark("cgroup")
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return sp, err
	}
	defer gateR.Close()
	sp.gate = gateW
	repR, repW, err := os.Pipe()
	if err != nil {
		return sp, err
	}
	defer repW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		repR.Close()
		return sp, err
	}
	defer outW.Close()
	self, err := os.Executable()
	if err != nil {
		repR.Close()
		outR.Close()
		return sp, err
	}
	// The spec comes through the gate (fd 3), not the command line: it is not known yet.
	cmd := exec.Command(self, SandboxInitArg, "")
	plan, err := spareMountsEnviron(o.Sources)
	if err != nil {
		repR.Close()
		outR.Close()
		return sp, err
	}
	cmd.Env = []string{plan}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = []*os.File{gateR}
	if o.SharedDir != "" {
		userns, err := sharedDirUserns(sp.uid())
		if err != nil {
			repR.Close()
			outR.Close()
			return sp, err
		}
		defer userns.Close() // the init has its own copy once started
		cmd.ExtraFiles = append(cmd.ExtraFiles, userns)
		sp.sharedIDMap = true
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, repW)
	sp.reportFD = 2 + len(cmd.ExtraFiles)
	// Made for every spare, as its profile is not known yet; unused, it closes at the exec.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		repR.Close()
		outR.Close()
		return sp, fmt.Errorf("close-cost socket: %w", err)
	}
	sp.closeSock = os.NewFile(uintptr(pair[0]), "close-cost")
	initEnd := os.NewFile(uintptr(pair[1]), "close-cost-init")
	defer initEnd.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, initEnd)
	sp.closeFD = 2 + len(cmd.ExtraFiles)
	flags := uintptr(syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC)
	if o.Network {
		flags |= syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err = cmd.Start(); err != nil {
		repR.Close()
		outR.Close()
		return sp, fmt.Errorf("start sandbox: %w", err)
	}
	sp.cmd = cmd
	go readInitReport(repR, sp.report)
	sp.outR = outR
	go func() { sp.copyOutput(); outR.Close(); close(sp.outDone) }()
	// The pid recorded before the reaper releases the process (Destroy signals the group by it).
	sp.pid = cmd.Process.Pid
	watchExit(cmd.Process, func(err error) { // reaper.go: no thread or pidfd per sandbox
		go func() {
			sp.exitErr = err
			<-sp.outDone // the output is complete when the sandbox counts as ended, as exec's own pipes
			close(sp.exited)
		}()
	})
	st.mark("clone_exec")
	// The platform raised its own descriptor limit (limits.go: RaiseFDLimit); functions keep
	// the one it started with.
	if err = restoreSandboxFDLimit(sp.pid); err != nil {
		return sp, fmt.Errorf("sandbox RLIMIT_NOFILE: %w", err)
	}
	// Before the init is released, so no work of the function escapes the limits.
	if err = sp.cgroup.Add(sp.pid); err != nil {
		return sp, err
	}
	st.mark("cgroup_add")
	return sp, nil
}

// takeCloseSock hands over the platform's end of the close-cost socket (nil once taken); it is
// closed if nobody takes it.
func (sp *spare) takeCloseSock() *os.File {
	s := sp.closeSock
	sp.closeSock = nil
	return s
}

// alive says whether the spare's init still waits.
func (sp *spare) alive() bool {
	select {
	case <-sp.exited:
		return false
	default:
		return true
	}
}

// claim makes the spare the sandbox at dir: its cgroup takes the sandbox's name, its /etc moves
// there (with the sandbox's hostname in /etc/hosts) and its output goes to out from now on.
func (sp *spare) claim(dir string, out io.Writer) error {
	if err := sp.cgroup.rename(filepath.Base(dir)); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(sp.dir, "etc"), filepath.Join(dir, "etc")); err != nil {
		return err
	}
	os.Remove(sp.dir)
	sp.dir = ""
	sp.out.set(out)
	return os.WriteFile(filepath.Join(dir, "etc", "hosts"), []byte(hostsFile(filepath.Base(dir))), 0o644)
}

// release sends the spec: the init builds the sandbox's root and execs the bootstrap.
func (sp *spare) release(spec SandboxSpec) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	_, err = sp.gate.Write(b)
	sp.gate.Close()
	sp.gate = nil
	return err
}

// destroy ends a spare that was never claimed (or whose claim failed before its sandbox took it
// over): the init, its cgroup, its directory, its uid.
func (sp *spare) destroy() {
	if sp.gate != nil {
		sp.gate.Close()
	}
	if s := sp.takeCloseSock(); s != nil {
		s.Close()
	}
	if sp.cgroup != nil {
		sp.cgroup.Kill()
	}
	if sp.pid != 0 && sp.alive() { // a reaped pid may be another process's by now
		_ = syscall.Kill(-sp.pid, syscall.SIGKILL)
		select {
		case <-sp.exited:
		case <-time.After(5 * time.Second):
		}
	}
	if sp.cgroup != nil {
		_ = sp.cgroup.Remove()
	}
	if sp.dir != "" {
		os.RemoveAll(sp.dir)
	}
	if sp.cgroup == nil || len(sp.cgroup.Dirs()) == 0 {
		sp.identity.release()
	}
}

// adopt makes the spare's process, cgroup and uid the sandbox's (Destroy ends them).
func (sb *Sandbox) adopt(sp *spare) {
	sb.spare = sp
	sb.Cmd, sb.Pid, sb.Cgroup, sb.identity = sp.cmd, sp.pid, sp.cgroup, sp.identity
	sb.exited, sb.initSteps = sp.exited, sp.report
}

// copyOutput copies the sandbox's output to its log, counting what reached it.
func (sp *spare) copyOutput() {
	buf := make([]byte, 32<<10)
	for {
		n, err := sp.outR.Read(buf)
		if n > 0 {
			sp.out.Write(buf[:n])
			sp.copied.Add(int64(n))
		}
		if err != nil {
			return
		}
	}
}

// flushOutput waits (up to max) until what the function wrote to its stdout and stderr has
// reached its log: the copy runs beside the Runtime API, so a line printed just before the
// response could otherwise miss the invocation's log tail (seen with lambda_runtime). Done when
// the pipe holds nothing and no copy is under way (the count has stood still for a moment).
func (sp *spare) flushOutput(max time.Duration) {
	rc, err := sp.outR.SyscallConn()
	if err != nil {
		return
	}
	pending := func() int {
		n := 0
		rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) // FIONREAD
		return n
	}
	for deadline := time.Now().Add(max); time.Now().Before(deadline); {
		before := sp.copied.Load()
		if pending() == 0 {
			time.Sleep(200 * time.Microsecond)
			if pending() == 0 && sp.copied.Load() == before {
				return
			}
			continue
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// switchWriter passes output on to a writer set later; before that it is dropped (a spare prints
// nothing unless its init fails).
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	w := s.w
	s.mu.Unlock()
	if w == nil {
		return len(p), nil
	}
	w.Write(p)
	return len(p), nil
}

// spares keeps a few spares ready for the platform's cold starts.
type spares struct {
	opts   spareOptions // Dir and ID are made per spare
	root   string       // where spares' directories are
	want   int
	mu     sync.Mutex
	ready  []*spare
	seq    int
	kick   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once
}

// spareRefillDelay is how long after a claim the refill starts.
const spareRefillDelay = 200 * time.Millisecond

func newSpares(o spareOptions, root string, want int) *spares {
	if want <= 0 {
		return nil
	}
	s := &spares{opts: o, root: root, want: want, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	s.wg.Add(1)
	go s.refill()
	s.kick <- struct{}{}
	return s
}

// take claims a ready spare whose init still waits; nil when there is none.
func (s *spares) take() *spare {
	if s == nil {
		return nil
	}
	defer func() {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}()
	for {
		s.mu.Lock()
		if len(s.ready) == 0 {
			s.mu.Unlock()
			return nil
		}
		sp := s.ready[0]
		s.ready = s.ready[1:]
		s.mu.Unlock()
		if sp.alive() {
			return sp
		}
		go sp.destroy()
	}
}

func (s *spares) refill() {
	defer s.wg.Done()
	first := true
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		if !first {
			select {
			case <-s.stop:
				return
			case <-time.After(spareRefillDelay):
			}
		}
		first = false
		for {
			s.mu.Lock()
			n := len(s.ready)
			s.seq++
			id := "spare." + strconv.Itoa(s.seq) // no instance's: function names have no dots
			s.mu.Unlock()
			if n >= s.want {
				break
			}
			o := s.opts
			o.Dir, o.ID = filepath.Join(s.root, id), id
			sp, err := spawnSpare(o, nil)
			if err != nil {
				log.Printf("spare sandbox: %v", err)
				break
			}
			s.mu.Lock()
			select {
			case <-s.stop:
				s.mu.Unlock()
				sp.destroy()
				return
			default:
			}
			s.ready = append(s.ready, sp)
			s.mu.Unlock()
		}
	}
}

// close destroys the spares still ready.
func (s *spares) close() {
	if s == nil {
		return
	}
	s.closed.Do(func() {
		s.mu.Lock()
		close(s.stop)
		list := s.ready
		s.ready = nil
		s.mu.Unlock()
		s.wg.Wait()
		for _, sp := range list {
			sp.destroy()
		}
	})
}
