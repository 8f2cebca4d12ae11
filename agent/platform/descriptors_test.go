package platform

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What the platform holds per warm instance bounds how many this machine holds (docs/platform.md,
// "Scale"): one descriptor per function's log file and one for all uid locks, not one of each
// per instance, and no pidfd (the reaper waits by pid).
func TestWarmInstancesShareLogAndUIDLockDescriptorsAndHoldNoPidfd(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{DefaultProfile: ProfileUnlimited})
	tp.create("fds", nil)
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, r, body := tp.invoke("fds", `{"workload":{"kind":"spin","iterations":30000000}}`)
			if !r.OK {
				t.Errorf("invoke: %s", body)
			}
			ids[i] = r.Instance.ID
		}(i)
	}
	wg.Wait()
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Fatalf("three concurrent invocations should run on three instances: %v", ids)
	}
	logPath, _ := filepath.Abs(filepath.Join(tp.logDir, "fds.log"))
	// A sandbox being started (a spare refilling, a neighbouring test's platform winding down)
	// holds a pidfd between clone and the reaper's Release, so one sample may see one. Held per
	// instance, the three warm instances' pidfds would be in every sample: the count must reach 0.
	var counts map[string]int
	deadline := time.Now().Add(5 * time.Second)
	for {
		counts = descriptorKinds(logPath)
		if counts["log"] == 1 && counts["uid lock"] == 1 && counts["pidfd"] == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("descriptors with 3 warm instances (+ spares): %v; want one log, one uid lock, no pidfd", counts)
}

// descriptorKinds counts this process's descriptors on the log file, the uid lock file and pidfds.
func descriptorKinds(logPath string) map[string]int {
	counts := map[string]int{}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue
		}
		switch {
		case target == logPath:
			counts["log"]++
		case target == uidLockFile:
			counts["uid lock"]++
		case strings.Contains(target, "pidfd"):
			counts["pidfd"]++
		}
	}
	return counts
}

// Uids are held by OFD locks on one file: a uid another platform (another open file
// description) holds is skipped, one this platform releases is handed out again.
func TestSandboxUIDsSkipOtherPlatformsLocksAndComeBackOnRelease(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for /run/faascope")
	}
	a, err := allocateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(uidLockFile, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// "another platform" locks the next uid free after a
	next := a.UID + 1
	for ; ; next++ {
		err := unix.FcntlFlock(other.Fd(), unix.F_OFD_SETLK, lockRange(unix.F_WRLCK, next))
		if err == nil {
			break
		}
	}
	b, err := allocateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	defer b.release()
	if b.UID == a.UID || b.UID == next {
		t.Fatalf("got uid %d: held by this platform (%d) or by another (%d)", b.UID, a.UID, next)
	}
	// the other description sees a's lock as a conflict while it is held, and not after release
	if err := unix.FcntlFlock(other.Fd(), unix.F_OFD_SETLK, lockRange(unix.F_WRLCK, a.UID)); err == nil {
		t.Fatalf("uid %d held by this platform could be locked by another", a.UID)
	}
	a.release()
	if err := unix.FcntlFlock(other.Fd(), unix.F_OFD_SETLK, lockRange(unix.F_WRLCK, a.UID)); err != nil {
		t.Fatalf("uid %d still locked after release: %v", a.UID, err)
	}
}

// The reaper reports how a child ended in exec.ExitError's words, without a pidfd or a thread.
func TestReaperReportsExitStatusAndSignal(t *testing.T) {
	for _, c := range []struct {
		script, want string
	}{{"exit 0", ""}, {"exit 3", "exit status 3"}, {"kill -9 $$", "signal: killed"}} {
		cmd := exec.Command("/bin/sh", "-c", c.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		watchExit(cmd.Process, func(err error) { got <- err })
		select {
		case err := <-got:
			text := ""
			if err != nil {
				text = err.Error()
			}
			if text != c.want {
				t.Fatalf("%q ended as %q, want %q", c.script, text, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: the reaper never reported its end", c.script)
		}
	}
}

// The control API speaks HTTP/1.1 (boto3) and h2c (a multiplexing client) on one port.
func TestControlAPIServesHTTP1AndH2C(t *testing.T) {
	tp := startPlatform(t, Config{DefaultProfile: ProfileUnlimited})
	h1, _ := tp.call("GET", "/2015-03-31/functions/", nil, nil)
	if h1.StatusCode != 200 || h1.ProtoMajor != 1 {
		t.Fatalf("HTTP/1.1: %d, HTTP/%d", h1.StatusCode, h1.ProtoMajor)
	}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: p}}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(tp.url + "/2015-03-31/functions/")
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.ProtoMajor != 2 || !strings.Contains(string(b), "Functions") {
				errs <- fmt.Errorf("h2c: %d HTTP/%d %s", resp.StatusCode, resp.ProtoMajor, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Sandbox set-ups beyond the bound wait their turn, and say so in their steps ("queue"), so a
// burst of cold starts cannot pile up OS threads blocked in the kernel.
func TestSandboxSetupsBeyondTheBoundQueue(t *testing.T) {
	needSandboxes(t)
	saved := sandboxSetups
	sandboxSetups = make(chan struct{}, 1)
	defer func() { sandboxSetups = saved }()
	tp := startPlatform(t, Config{DefaultProfile: ProfileUnlimited, SpareSandboxes: -1})
	tp.create("q", nil)
	sandboxSetups <- struct{}{} // the one slot is taken: the next set-up must wait for it
	go func() { time.Sleep(300 * time.Millisecond); <-sandboxSetups }()
	resp, r, body := tp.invoke("q", `{"workload":{"kind":"noop"}}`)
	if !r.OK || !r.Cold {
		t.Fatalf("invoke: %s", body)
	}
	steps := resp.Header.Get("X-Faascope-Setup-Steps")
	var queued float64
	for _, kv := range strings.Split(steps, ",") {
		if v, ok := strings.CutPrefix(kv, "queue="); ok {
			queued, _ = strconv.ParseFloat(v, 64)
		}
	}
	if queued < 250 {
		t.Fatalf("a set-up waiting ~300 ms for the only slot reported queue=%v ms: %q", queued, steps)
	}
	// with the slot free, no queue step
	resp, _, _ = tp.invoke("q", `{"workload":{"kind":"spin","iterations":1}}`)
	if resp.Header.Get("X-Faascope-Cold") == "true" && strings.Contains(resp.Header.Get("X-Faascope-Setup-Steps"), "queue=") {
		t.Fatalf("a set-up with a free slot queued: %q", resp.Header.Get("X-Faascope-Setup-Steps"))
	}
}

// A uid an older platform holds with its per-uid flock file (before the single lock file) is
// skipped, so the two versions side by side never share one.
func TestSandboxUIDsSkipUIDsAnOlderPlatformHolds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for /run/faascope")
	}
	saved := legacyUIDLockDir
	legacyUIDLockDir = t.TempDir()
	defer func() { legacyUIDLockDir = saved }()
	probe, err := allocateIdentity() // the uid this platform would hand out next
	if err != nil {
		t.Fatal(err)
	}
	probe.release()
	f, err := os.OpenFile(filepath.Join(legacyUIDLockDir, strconv.Itoa(probe.UID)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	got, err := allocateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	defer got.release()
	if got.UID == probe.UID {
		t.Fatalf("uid %d is held by an older platform's flock and was handed out", got.UID)
	}
}
