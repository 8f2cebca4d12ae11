package platform

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// One reaper waits for every sandbox's init process. exec.Cmd.Wait would hold, per sandbox, a
// pidfd (Go keeps one from clone(CLONE_PIDFD) until Wait) and an OS thread blocked in
// waitid(2) for the sandbox's whole life: at thousands of warm instances that was one of the
// platform's descriptors and one of the machine's tasks each. Here the pidfd is closed at once
// (Process.Release) and one goroutine, woken by SIGCHLD, collects the registered children with
// wait4(pid, WNOHANG). Only registered pids are waited for, so the children of other exec.Cmds
// (mkfs, the shared directory's user namespace holder) are left to their own Wait. A pid cannot
// be reused before it is reaped, and only the reaper reaps it, so a registered pid is always the
// child that was registered.
type reaper struct {
	mu      sync.Mutex
	waiting map[int]func(error)
	wake    chan os.Signal
	start   sync.Once
}

var childReaper = &reaper{waiting: map[int]func(error){}}

// watchExit calls done (from the reaper's goroutine) with how the child pid ended: nil for
// exit status 0, else an error whose text is exec.ExitError's ("exit status 1", "signal:
// killed"). The caller must have started pid and must not wait for it otherwise.
func watchExit(p *os.Process, done func(error)) {
	r := childReaper
	r.start.Do(func() {
		r.wake = make(chan os.Signal, 1)
		signal.Notify(r.wake, syscall.SIGCHLD)
		go r.loop()
	})
	pid := p.Pid
	// The pidfd exec kept is not needed: the reaper waits by pid. Release keeps the child a
	// child (a zombie until reaped); it only closes the descriptor.
	_ = p.Release()
	r.mu.Lock()
	r.waiting[pid] = done
	r.mu.Unlock()
	// It may have ended before it was registered (its SIGCHLD then found nothing to reap).
	select {
	case r.wake <- syscall.SIGCHLD:
	default:
	}
}

func (r *reaper) loop() {
	for range r.wake {
		r.mu.Lock()
		pids := make([]int, 0, len(r.waiting))
		for pid := range r.waiting {
			pids = append(pids, pid)
		}
		r.mu.Unlock()
		for _, pid := range pids {
			var ws unix.WaitStatus
			got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
			if got == 0 || (err != nil && err == unix.EINTR) {
				continue
			}
			r.mu.Lock()
			done := r.waiting[pid]
			delete(r.waiting, pid)
			r.mu.Unlock()
			if err != nil { // ECHILD: someone else reaped it; it has ended all the same
				done(fmt.Errorf("wait: %w", err))
				continue
			}
			done(exitStatusError(ws))
		}
	}
}

// exitStatusError describes a wait status as os.ProcessState.String does; nil for exit 0.
func exitStatusError(ws unix.WaitStatus) error {
	switch {
	case ws.Exited():
		if ws.ExitStatus() == 0 {
			return nil
		}
		return fmt.Errorf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		s := "signal: " + ws.Signal().String()
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return fmt.Errorf("%s", s)
	}
	return fmt.Errorf("wait status %#x", uint32(ws))
}
