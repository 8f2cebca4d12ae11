package platform

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SandboxInitArg is the hidden first argument with which the platform re-executes itself as
// the first process of a new sandbox.
const SandboxInitArg = "__sandbox-init"

// RunSandboxInit runs inside fresh namespaces: it waits until the host has put it into its
// cgroup, builds a minimal root file system (read-only system directories, the package at
// /var/task, a private /tmp), pivots into it, drops to an unprivileged user and execs the
// function's bootstrap. It never returns on success.
//
// With an empty specJSON the spec comes through fd 3, the gate, once the host has claimed the
// sandbox (spares.go): the init waits there, already in its namespaces and cgroup.
func RunSandboxInit(specJSON string) error {
	var s SandboxSpec
	if specJSON != "" {
		if err := json.Unmarshal([]byte(specJSON), &s); err != nil {
			return fmt.Errorf("sandbox spec: %w", err)
		}
		if s.Hold {
			holdUntilStdinCloses()
		}
	}
	rep := initReport{Started: time.Now()}
	// A spare drops the host's mounts before it waits (sparemounts.go), not at the claim: a
	// copy it held while waiting pinned them.
	if err := dropHostMounts(); err != nil {
		return err
	}
	// Credentials, no_new_privs and the seccomp filter are per thread, and exec keeps only the
	// calling thread's: everything from here to exec happens on this one.
	runtime.LockOSThread()
	// Fd 3 is the host's go-ahead, with the spec; it closes empty if the host gave up.
	gate := os.NewFile(3, "gate")
	b, _ := io.ReadAll(io.LimitReader(gate, 16<<20))
	gate.Close()
	if len(b) == 0 {
		return fmt.Errorf("host did not release the sandbox")
	}
	rep.Released = time.Now()
	if specJSON == "" {
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("sandbox spec: %w", err)
		}
	}
	if s.ReportFD > 0 {
		unix.CloseOnExec(s.ReportFD) // the bootstrap must not inherit it
	}
	if s.CloseFD > 0 {
		unix.CloseOnExec(s.CloseFD)
	}
	st := &stepTimer{last: rep.Released}
	if err := buildRoot(&s, st); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(filepath.Base(filepath.Dir(s.Rootfs)))); err != nil {
		return fmt.Errorf("sethostname: %w", err)
	}
	if err := dropPrivileges(s.UID); err != nil {
		return err
	}
	if err := os.Chdir("/var/task"); err != nil {
		return err
	}
	// The Lambda variables (PATH, LAMBDA_TASK_ROOT, …) come in s.Env (sandboxEnv), and only
	// they: as on AWS, TMPDIR and HOME are unset (Go's os.TempDir, Python's tempfile and Node's
	// os.tmpdir() all fall back to /tmp, the only writable place; the sandbox's passwd gives
	// the user /tmp as its home).
	env := mergeEnv(s.Env)
	st.mark("privileges")
	// Last, since the policy refuses keyctl and mount: nothing but exec follows.
	if err := installSeccomp(); err != nil {
		return err
	}
	// The profile's per-system-call cost (syscallcost.go): from here on every call pays it.
	if err := installSyscallPad(s.SyscallPadInsns); err != nil {
		return err
	}
	// The profile's cost of a close (closecost.go), served by the platform; nothing here closes
	// a descriptor after it.
	if s.CloseCost && s.CloseFD > 0 {
		if err := handOverCloseNotify(s.CloseFD); err != nil {
			return err
		}
	}
	st.mark("seccomp")
	if s.ReportFD > 0 {
		// The report's pipe closes with the exec; a host that stopped reading costs nothing.
		rep.Steps, rep.Exec, rep.TmpDev = st.steps, time.Now(), s.tmpDev
		f := os.NewFile(uintptr(s.ReportFD), "report")
		b, _ := json.Marshal(rep)
		f.Write(b)
	}
	return syscall.Exec(s.Entrypoint, []string{s.Entrypoint}, env)
}

// initReport is what the sandbox init tells the host of its own part of a cold start: when it
// started (its process's runtime up), when the host released it, its steps, and when it
// exec'd the bootstrap (the runtime's init starts there).
type initReport struct {
	Started  time.Time `json:"started"`
	Released time.Time `json:"released"`
	Steps    []Step    `json:"steps"`
	Exec     time.Time `json:"exec"`
	TmpDev   string    `json:"tmp_dev,omitempty"` // the ext4 /tmp's loop device, "major:minor" (devicecpu.go)
}

// readInitReport reads the init's report (until the pipe closes at its exec or death).
func readInitReport(r *os.File, out chan<- initReport) {
	defer r.Close()
	var rep initReport
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if len(b) > 0 && json.Unmarshal(b, &rep) == nil {
		out <- rep
		return
	}
	out <- initReport{}
}

func buildRoot(s *SandboxSpec, st *stepTimer) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	st.mark("mounts_private")
	root := s.Rootfs
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=755"); err != nil {
		return fmt.Errorf("mount root: %w", err)
	}
	// var/runtime: LAMBDA_RUNTIME_DIR, empty for provided.* runtimes as on Lambda; opt: layers.
	for _, d := range []string{"usr", "etc", "var/task", "var/runtime", "opt", "tmp", "proc", "dev", "sys/fs/cgroup"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	if err := bindReadOnly("/usr", filepath.Join(root, "usr")); err != nil {
		return err
	}
	// The sandbox's own /etc (identity.go), not the host's.
	etc := s.EtcDir
	if etc == "" {
		etc = "/etc"
	}
	if err := bindReadOnly(etc, filepath.Join(root, "etc")); err != nil {
		return err
	}
	// Merged-/usr hosts have /bin → usr/bin etc.; otherwise bind the real directories.
	for _, d := range []string{"bin", "sbin", "lib", "lib64", "lib32"} {
		fi, err := os.Lstat("/" + d)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink("/" + d)
			if err := os.Symlink(target, filepath.Join(root, d)); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
		if err := bindReadOnly("/"+d, filepath.Join(root, d)); err != nil {
			return err
		}
	}
	if err := shIsBash(root); err != nil {
		return err
	}
	if err := bindReadOnly(s.TaskDir, filepath.Join(root, "var/task")); err != nil {
		return err
	}
	if s.RuntimeDir != "" { // a managed runtime (runtimes.go); else /var/runtime stays empty
		if err := bindReadOnly(s.RuntimeDir, filepath.Join(root, "var/runtime")); err != nil {
			return err
		}
	}
	if s.LangDir != "" { // the runtime's exact interpreter (interpreters.go); else no /var/lang
		dst := filepath.Join(root, sandboxLangDir)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := bindReadOnly(s.LangDir, dst); err != nil {
			return err
		}
	}
	if s.OptDir != "" { // the function's layers (layers.go); else /opt stays empty, as on Lambda
		if err := bindReadOnly(s.OptDir, filepath.Join(root, "opt")); err != nil {
			return err
		}
	}
	st.mark("mount_system_code")
	if err := mountTmp(s, filepath.Join(root, "tmp")); err != nil {
		return err
	}
	st.mark("mount_tmp")
	if s.SharedDir != "" {
		dst := filepath.Join(root, SharedMount)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := mountShared(s, dst); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := maskProc(filepath.Join(root, "proc")); err != nil { // procmask.go
		return err
	}
	if err := populateDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	if err := mountCgroups(s, filepath.Join(root, "sys/fs/cgroup")); err != nil {
		return err
	}
	if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("remount root read-only: %w", err)
	}
	st.mark("mount_proc_dev_cgroup")
	err := pivotInto(root)
	st.mark("pivot_root")
	return err
}

// shIsBash makes the sandbox's /bin/sh bash, as it is on Amazon Linux (2 and 2023), where a
// Debian host's is dash. Custom runtimes' bootstraps are shell scripts written for Lambda: AWS's
// own tutorial bootstrap starts "#!/bin/sh" then "set -euo pipefail", which dash refuses ("set:
// Illegal option -o pipefail"), so such a function's every invocation failed here
// (test_lambda_common's recorded provided.* echo, replayed in tests/conformance/replay). The host's
// bash is bound read-only over what sh resolves to inside the sandbox's /usr; bash run as sh is
// in its POSIX mode, as on Amazon Linux.
func shIsBash(root string) error {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil || filepath.Base(sh) == "bash" {
		return nil // no sh, or already bash
	}
	bash, err := filepath.EvalSymlinks("/bin/bash")
	if err != nil {
		return nil // no bash on this host: sh stays what it is
	}
	if err := bindReadOnly(bash, filepath.Join(root, sh)); err != nil {
		return fmt.Errorf("/bin/sh as bash: %w", err)
	}
	return nil
}

func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	if err := unix.Mount("", dst, "", flags, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", dst, err)
	}
	return nil
}

func mountTmp(s *SandboxSpec, dst string) error {
	const flags = unix.MS_NOSUID | unix.MS_NODEV
	switch s.Tmp {
	case TmpTmpfs:
		opts := "mode=1777,size=" + strconv.FormatInt(s.TmpBytes, 10)
		if err := unix.Mount("tmpfs", dst, "tmpfs", flags, opts); err != nil {
			return fmt.Errorf("mount tmpfs /tmp: %w", err)
		}
		return nil
	case TmpDir:
		if err := unix.Mount(s.TmpSource, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /tmp: %w", err)
		}
		return nil
	case TmpExt4:
		dev, err := attachLoopDIO(s.TmpSource) // loopdio.go: direct I/O on, no host page cache
		if err != nil {
			return err
		}
		// An auto-clearing loop device detaches when its last user goes: hold it until mounted.
		defer dev.Close()
		// The device's throttle (blkio.go) before anything of the function's reaches it; written
		// even when unlimited, since a rule an earlier sandbox left on this device number stays.
		if err := throttleDevice(s.Blkio, dev.devNumber(), s.TmpIO); err != nil {
			return err
		}
		if err := unix.Mount(dev.Path, dst, "ext4", flags, ""); err != nil {
			return fmt.Errorf("mount %s on /tmp: %w", dev.Path, err)
		}
		s.tmpDev = dev.devNumber()
		// Like Lambda's /tmp: writable by the function's user, sticky.
		if err := os.Chmod(dst, 0o1777|os.ModeSticky); err != nil {
			return err
		}
		return nil
	}
	return fmt.Errorf("unknown /tmp kind %q", s.Tmp)
}

// openLoop opens a loop device node, waiting briefly for devtmpfs to create a new one.
func openLoop(dev string) (*os.File, error) {
	var err error
	for i := 0; i < 50; i++ {
		var f *os.File
		if f, err = os.OpenFile(dev, os.O_RDWR, 0); err == nil {
			return f, nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil, fmt.Errorf("open %s: %w", dev, err)
}

// populateDev gives the sandbox the few device nodes a function needs (dd reads /dev/zero and
// /dev/urandom and writes /dev/null) and nothing else.
func populateDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=755"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom"} {
		dst := filepath.Join(dev, name)
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		f.Close()
		if err := unix.Mount("/dev/"+name, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", name, err)
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	// No /dev/shm: Lambda has none (POSIX shared memory and semaphores fail there too), and a
	// tmpfs here would be memory outside the function's accounting of /tmp.
	return nil
}

// mountCgroups shows the sandbox its own cgroup, read-only, where containers usually see it.
func mountCgroups(s *SandboxSpec, dst string) error {
	if s.CgroupV2 {
		return bindReadOnly(s.CgroupDirs[""], dst)
	}
	for ctrl, dir := range s.CgroupDirs {
		d := filepath.Join(dst, ctrl)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := bindReadOnly(dir, d); err != nil {
			return err
		}
	}
	return nil
}

func pivotInto(root string) error {
	if err := os.Chdir(root); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root under the new one; detaching it leaves only ours.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return os.Chdir("/")
}

// mountShared binds the shared directory at dst, idmapped when the host gave a user namespace
// for it (fd 4, see sharedDirUserns): open_tree clones the bind, mount_setattr maps its ids,
// move_mount attaches it.
func mountShared(s *SandboxSpec, dst string) error {
	const attrs = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	if !s.SharedIDMap {
		if err := unix.Mount(s.SharedDir, dst, "", unix.MS_BIND|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("bind the shared directory: %w", err)
		}
		return nil
	}
	userns := os.NewFile(4, "userns")
	defer userns.Close()
	tree, err := unix.OpenTree(unix.AT_FDCWD, s.SharedDir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", s.SharedDir, err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | attrs, Userns_fd: uint64(userns.Fd())}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("idmap the shared directory (does its file system support idmapped mounts?): %w", err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach the shared directory: %w", err)
	}
	return nil
}

// dropPrivileges leaves the function nothing of root's: no capability can come back (the
// bounding, inheritable and ambient sets are empty, no_new_privs), it runs as its own uid and
// gid, and it has a session keyring of its own, empty, instead of the host's.
func dropPrivileges(uid int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	last := capLastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	// The kernel clears the parent-death signal when the credentials change, and this thread
	// goes on to exec the runtime as the sandbox's pid 1: set it again, so a platform killed
	// without a chance to stop its sandboxes takes them with it (the kernel kills a pid
	// namespace's every process when its pid 1 dies; issue #29 found sandboxes outliving a
	// SIGKILLed platform).
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	// Leaving uid 0 cleared the permitted and effective sets; inheritable and ambient stay
	// unless cleared.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	// A new anonymous session keyring (a NULL name: x/sys's wrapper would pass "" and join a
	// keyring by that name, shared), owned by the sandbox's uid since it is made after setresuid;
	// and the uid's user keyring emptied of whatever an earlier sandbox with this uid left.
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
		return fmt.Errorf("join a new session keyring: %w", e)
	}
	userRing := unix.KEY_SPEC_USER_KEYRING // negative: converted at run time
	if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_CLEAR, uintptr(userRing), 0); e != 0 {
		return fmt.Errorf("clear the user keyring: %w", e)
	}
	return nil
}

// capLastCap is the highest capability number this kernel knows.
func capLastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if n, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
		return n
	}
	return 63
}
