package platform

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startAs runs argv, as uid unless asRoot (then the command changes its own uid), and returns its
// pid once it runs as uid (its status's real and effective uids) with its /proc entry its uid's.
func startAs(t testing.TB, uid int, asRoot bool, argv ...string) int {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if !asRoot {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	want := fmt.Sprintf("\nUid:\t%d\t%d\t", uid, uid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var st unix.Stat_t
		status, _ := os.ReadFile(proc + "/status")
		if unix.Stat(proc, &st) == nil && st.Uid == uint32(uid) && strings.Contains(string(status), want) {
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: process %d never ran as uid %d", argv, cmd.Process.Pid, uid)
		}
	}
}

// TestSandboxUIDWithARunningProcessIsSkipped: a process runs as the uid allocateIdentity would
// hand out next (as a dead platform's sandbox would, its lock gone with the platform): the uid is
// skipped, for a plain process and for a non-dumpable one (whose /proc files show root; the
// scan reads only its directory, which keeps its uid). Before the fix the uid was handed out
// again (issue #29 saw uid 1055 given to another function's sandbox while the first still ran).
func TestSandboxUIDWithARunningProcessIsSkipped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for /run/faascope and to run as another uid")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for a non-dumpable process")
	}
	other, err := os.OpenFile(uidLockFile, os.O_RDWR, 0) // another open file description
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, c := range []struct {
		name        string
		argv        func(uid int) []string
		nonDumpable bool
	}{
		{"plain", func(int) []string { return []string{sleep, "60"} }, false},
		{"non-dumpable", func(uid int) []string {
			// started as root (python's own files may be root's alone), it becomes the uid, then
			// non-dumpable (prctl 4: PR_SET_DUMPABLE)
			return []string{python, "-c", fmt.Sprintf("import ctypes, os, time; os.setresgid(%[1]d, %[1]d, %[1]d); "+
				"os.setresuid(%[1]d, %[1]d, %[1]d); ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(60)", uid)}
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			probe, err := allocateIdentity() // the uid this platform would hand out next
			if err != nil {
				t.Fatal(err)
			}
			probe.release()
			pid := startAs(t, probe.UID, c.nonDumpable, c.argv(probe.UID)...)
			if c.nonDumpable { // the files inside its /proc directory are root's once it is
				var st unix.Stat_t
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
					if unix.Stat("/proc/"+strconv.Itoa(pid)+"/status", &st) == nil && st.Uid == 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("process %d never became non-dumpable", pid)
					}
				}
			}
			got, err := allocateIdentity()
			if err != nil {
				t.Fatal(err)
			}
			defer got.release()
			if got.UID == probe.UID {
				t.Fatalf("uid %d was handed out while process %d runs as it", got.UID, pid)
			}
			// Skipped for its process, not for a lock another platform took meanwhile.
			lk := lockRange(unix.F_WRLCK, probe.UID)
			if err := unix.FcntlFlock(other.Fd(), unix.F_OFD_GETLK, lk); err != nil || lk.Type != unix.F_UNLCK {
				t.Skipf("uid %d was locked by another platform meanwhile: inconclusive", probe.UID)
			}
		})
	}
}

// BenchmarkUIDsRunning2000: the cost of one scan with 2,000 more processes.
// go test -run X -bench UIDsRunning ./platform
func BenchmarkUIDsRunning2000(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		b.Skip("no sleep")
	}
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for i := 0; i < 2000; i++ {
		c := exec.Command(sleep, "120")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	entries, _ := os.ReadDir("/proc")
	b.Logf("%d entries in /proc", len(entries))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		uidsRunning(sandboxUIDBase, sandboxUIDBase+sandboxUIDCount)
	}
}
