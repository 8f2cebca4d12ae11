package platform

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestMountsToDetachKeepsTreesAndTheWayToThem(t *testing.T) {
	mounts := []mountEntry{
		{ID: 1, Parent: 0, Point: "/"}, {ID: 2, Parent: 1, Point: "/proc"}, {ID: 3, Parent: 2, Point: "/proc/sys/fs/binfmt_misc"}, {ID: 4, Parent: 1, Point: "/dev"},
		{ID: 5, Parent: 4, Point: "/dev/shm"}, {ID: 6, Parent: 1, Point: "/data"}, {ID: 7, Parent: 6, Point: "/data/a/host-disk"}, {ID: 8, Parent: 1, Point: "/other"},
		{ID: 9, Parent: 8, Point: "/other/host-disk"}, {ID: 10, Parent: 1, Point: "/usr"}, {ID: 11, Parent: 10, Point: "/usr/local"}, {ID: 12, Parent: 1, Point: "/tmp"},
		{ID: 13, Parent: 12, Point: "/tmp/x/shared"}, {ID: 14, Parent: 12, Point: "/tmp/y"}, {ID: 15, Parent: 14, Point: "/tmp/y"}, {ID: 16, Parent: 1, Point: "/data2"},
	}
	got := mountsToDetach(mounts, []string{"/data/a", "/usr", "/tmp/x/shared"}, []string{"/dev", "/proc"})
	// /other goes with its host disk (named once, the topmost); /tmp/y is two stacked mounts at
	// one point, named once (dropHostMounts detaches until none is left); /data2 is no prefix
	// of /data/a.
	want := []string{"/proc/sys/fs/binfmt_misc", "/dev/shm", "/other", "/tmp/y", "/data2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("detach %q, want %q", got, want)
	}
}

// The fields after the separator, wherever the optional fields end: what unmountStale
// (shareddev.go) matches a stale mount by.
func TestReadMountinfoFindsTypeAndSource(t *testing.T) {
	f := filepath.Join(t.TempDir(), "mountinfo")
	os.WriteFile(f, []byte("36 35 98:0 / /mnt/a\\040b rw,noatime master:1 shared:2 - ext4 /dev/loop3 rw\n"+
		"37 35 0:44 / /srv/shared rw - fuse.faascope faascope rw\n"), 0o600)
	got, err := readMountinfo(f)
	want := []mountEntry{{ID: 36, Parent: 35, Point: "/mnt/a b", FSType: "ext4", Source: "/dev/loop3"},
		{ID: 37, Parent: 35, Point: "/srv/shared", FSType: "fuse.faascope", Source: "faascope"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v (%v), want %+v", got, err, want)
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/t\011ab\012`: "/t\tab\n", `/b\134s`: `/b\s`, `/plain`: "/plain", `/end\04`: `/end\04`} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestSparesAndSandboxesPinNoOtherMounts: another platform's host disk (an ext4 image on an
// auto-clearing loop device, as hostdisk.go mounts it) is mounted before this platform makes its
// spare and a sandbox. Neither lists it in its mountinfo, and when the other platform unmounts it
// and removes its image the loop device detaches while both still run. Before the fix each spare
// held a copy of the host's whole mount table until claimed: the disk stayed mounted in the
// spare, its loop device attached to the deleted image (issue #29).
func TestSparesAndSandboxesPinNoOtherMounts(t *testing.T) {
	needSandboxes(t)
	other := t.TempDir()
	image, dir := filepath.Join(other, "host-disk.ext4"), filepath.Join(other, "host-disk")
	if err := makeExt4(image, 16<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dev, err := attachLoopDIO(image)
	if err != nil {
		t.Skipf("loop devices: %v", err)
	}
	backing := "/sys/block/" + filepath.Base(dev.Path) + "/loop/backing_file"
	err = unix.Mount(dev.Path, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV, "")
	dev.Close()
	if err != nil {
		t.Fatal(err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})

	tp := startPlatform(t, Config{SpareSandboxes: 1})
	tp.create("fn", nil)
	if _, r, body := tp.invoke("fn", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("invoke: %s", body)
	}
	insts := tp.Instances()
	if len(insts) != 1 {
		t.Fatalf("instances: %+v", insts)
	}
	tp.mu.Lock()
	sandboxPid := tp.instances[insts[0].ID].Sandbox.Pid
	tp.mu.Unlock()
	sparePid := 0
	for deadline := time.Now().Add(10 * time.Second); sparePid == 0; time.Sleep(20 * time.Millisecond) {
		tp.spares.mu.Lock()
		if len(tp.spares.ready) > 0 {
			sparePid = tp.spares.ready[0].pid
		}
		tp.spares.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("no spare after 10 s")
		}
	}

	// The spare drops the host's other mounts while it waits, the moment it starts: give it that.
	lists := func(pid int) bool {
		ms, err := readMountinfo("/proc/" + strconv.Itoa(pid) + "/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if pathWithin(m.Point, other) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); lists(sparePid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the spare (pid %d) still lists the other platform's disk %s after 5 s", sparePid, dir)
		}
	}
	if lists(sandboxPid) {
		t.Fatalf("the sandbox (pid %d) lists the other platform's disk %s", sandboxPid, dir)
	}
	// A sandbox's mounts are its root's: what buildRoot mounts, nothing of the host's beside.
	ms, err := readMountinfo("/proc/" + strconv.Itoa(sandboxPid) + "/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	own := []string{"/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/var/task", "/opt",
		"/tmp", "/proc", "/dev", "/sys/fs/cgroup", SharedMount}
	for _, m := range ms {
		ok := false
		for _, p := range own {
			ok = ok || (p == "/" && m.Point == "/") || (p != "/" && pathWithin(m.Point, p))
		}
		if !ok {
			t.Errorf("the sandbox's mount %s is none of its root's", m.Point)
		}
	}

	// The other platform stops: unmounts its disk and removes the image. Nothing holds the mount
	// now, so the auto-clearing loop device detaches.
	if err := unix.Unmount(dir, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	os.Remove(image)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(backing)
		if err != nil || !strings.Contains(string(b), image) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still attached to %s 5 s after its unmount: a spare or sandbox holds the mount", dev.Path, strings.TrimSpace(string(b)))
		}
	}
}
