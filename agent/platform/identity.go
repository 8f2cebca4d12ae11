package platform

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Every sandbox runs as a host uid (and gid) of its own. The kernel keeps per-user state that
// no namespace separates: the user keyring, and the per-user limits (inotify instances and
// watches, the RLIMIT_NPROC count, POSIX message queue bytes). With one shared uid, a key
// added by one function was readable by another, and one function holding its 128 inotify
// instances left every other sandbox with EMFILE.
//
// Uids come from [sandboxUIDBase, sandboxUIDBase+sandboxUIDCount), skipping uids and gids the
// host's /etc/passwd and /etc/group name and uids some process runs as (uidbusy.go). A uid is held for the sandbox's life by an exclusive
// open-file-description lock (F_OFD_SETLK) on byte uid of one lock file, uidLockFile, so
// platforms running side by side (one per data directory) never hand out the same uid, and a
// crashed platform's uids come free with its process. One descriptor holds all of a platform's
// uids: a lock file per uid cost one descriptor per sandbox, which at thousands of warm
// instances was a fifth of the process's RLIMIT_NOFILE. OFD locks belong to the open file
// description, not the process, so another platform's open conflicts; within this process the
// table below says which uids are held (a second lock through the same description would
// succeed). The first uid is 1051, Lambda's sbx_user1051.
const (
	sandboxUIDBase  = SandboxUID
	sandboxUIDCount = 60000
)

// uidLockFile is where the allocation locks are; /run is a tmpfs, so a reboot clears it.
var uidLockFile = "/run/faascope/sandbox-uids.lock"

// uidLocks is this process's descriptor on uidLockFile and the uids it holds.
var uidLocks struct {
	sync.Mutex
	f    *os.File
	held map[int]bool
}

// sandboxIdentity is a uid (== gid) held for one sandbox.
type sandboxIdentity struct {
	UID  int
	held bool
}

// lockRange is the OFD lock of one byte, the uid's.
func lockRange(typ int16, uid int) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: io.SeekStart, Start: int64(uid), Len: 1}
}

// openLockFile opens (creating it and its directory, root's only) a file whose bytes are OFD
// locks: the uids' (here) and the platforms' (platformlock.go).
func openLockFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
}

func allocateIdentity() (*sandboxIdentity, error) {
	taken := hostIDs("/etc/passwd")
	for id := range hostIDs("/etc/group") {
		taken[id] = true
	}
	// Outside the lock, as the files above: a uid gains a process only from the platform that
	// holds it (uidbusy.go).
	running := sandboxUIDsRunning()
	uidLocks.Lock()
	defer uidLocks.Unlock()
	if uidLocks.f == nil {
		f, err := openLockFile(uidLockFile)
		if err != nil {
			return nil, fmt.Errorf("uid locks: %w", err)
		}
		uidLocks.f, uidLocks.held = f, map[int]bool{}
	}
	fd := int(uidLocks.f.Fd())
	for uid := sandboxUIDBase; uid < sandboxUIDBase+sandboxUIDCount; uid++ {
		if taken[uid] || uidLocks.held[uid] || running[uid] {
			continue
		}
		if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, lockRange(unix.F_WRLCK, uid)); err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
				continue // another platform's
			}
			return nil, fmt.Errorf("lock uid %d: %w", uid, err)
		}
		if legacyUIDHeld(uid) {
			_ = unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, lockRange(unix.F_UNLCK, uid))
			continue
		}
		uidLocks.held[uid] = true
		return &sandboxIdentity{UID: uid, held: true}, nil
	}
	return nil, fmt.Errorf("all %d sandbox uids from %d are in use", sandboxUIDCount, sandboxUIDBase)
}

// legacyUIDLockDir is where platforms before the single lock file held their uids, one flocked
// file each: a uid one of them still holds (a platform of the previous version running beside
// this one) is skipped. The check opens the file only while looking.
var legacyUIDLockDir = "/run/faascope/sandbox-uids"

func legacyUIDHeld(uid int) bool {
	f, err := os.OpenFile(filepath.Join(legacyUIDLockDir, strconv.Itoa(uid)), os.O_RDWR, 0)
	if err != nil {
		return false // none: never held by an older platform
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// release frees the uid; call it once no process of the sandbox is left.
func (id *sandboxIdentity) release() {
	if id == nil || !id.held {
		return
	}
	uidLocks.Lock()
	defer uidLocks.Unlock()
	id.held = false
	delete(uidLocks.held, id.UID)
	_ = unix.FcntlFlock(uidLocks.f.Fd(), unix.F_OFD_SETLK, lockRange(unix.F_UNLCK, id.UID))
}

// hostIDs reads the numeric ids (third field) of a passwd- or group-format file: a new map,
// from the last reading while the file's size and modification time are unchanged (a burst of
// cold starts read both files once each, not once per sandbox).
func hostIDs(path string) map[int]bool {
	fi, err := os.Stat(path)
	if err != nil {
		return map[int]bool{}
	}
	stamp := fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	if c, ok := hostIDCache.Load(path); ok && c.(hostIDsRead).stamp == stamp {
		return maps.Clone(c.(hostIDsRead).ids)
	}
	ids := map[int]bool{}
	f, err := os.Open(path)
	if err != nil {
		return ids
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Split(sc.Text(), ":"); len(fields) > 2 {
			if n, err := strconv.Atoi(fields[2]); err == nil {
				ids[n] = true
			}
		}
	}
	hostIDCache.Store(path, hostIDsRead{stamp, maps.Clone(ids)})
	return ids
}

type hostIDsRead struct {
	stamp string
	ids   map[int]bool
}

var hostIDCache sync.Map // path → hostIDsRead

// sandboxEtcFiles is all of a sandbox's /etc (paths relative to it). The host's /etc is not
// shown: it names the host's users, services and configuration (and world-readable files such
// as /etc/machine-id identify the machine). Lambda's /etc is its image's; these are what
// programs need of one: name service files naming the sandbox's user, name resolution, the CA
// bundle for HTTPS, the dynamic loader's cache (for dd and other host binaries under /usr), UTC.
var sandboxEtcFiles = []string{"passwd", "group", "hosts", "resolv.conf", "nsswitch.conf",
	"localtime", "ld.so.cache", "ssl/certs/ca-certificates.crt"}

// hostsFile is a sandbox's /etc/hosts: its hostname is loopback.
func hostsFile(hostname string) string {
	return "127.0.0.1\tlocalhost " + hostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n"
}

// writeSandboxEtc fills dir (<sandboxes>/<id>/etc) with the sandbox's /etc for the given uid and
// hostname. What is the same in every sandbox (the name service and resolver configuration, the
// loader's cache, the CA bundle: ~300 KB) is written once per platform, in sharedEtcDir beside
// the sandboxes, and hard-linked here: the whole /etc is bound read-only, so no sandbox can
// change a shared file, and a burst of cold starts no longer copies it for each.
func writeSandboxEtc(dir string, uid int, hostname string) error {
	user := "sbx_user" + strconv.Itoa(SandboxUID) // Lambda's name, whatever the number
	files := map[string]string{
		"passwd": fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d::/tmp:/sbin/nologin\n"+
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n", user, uid, uid),
		"group": fmt.Sprintf("root:x:0:\n%s:x:%d:\nnobody:x:65534:\n", user, uid),
		"hosts": hostsFile(hostname),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	shared, err := sharedEtc(filepath.Join(filepath.Dir(filepath.Dir(dir)), sharedEtcDir))
	if err != nil {
		return err
	}
	for _, name := range sharedEtcFiles {
		src, dst := filepath.Join(shared, name), filepath.Join(dir, name)
		if _, err := os.Lstat(src); os.IsNotExist(err) {
			continue // the host has none (no CA bundle)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Link(src, dst); err != nil {
			if err := copyFile(src, dst); err != nil { // another file system
				return err
			}
		}
	}
	// Lambda runs in UTC; /usr/share/zoneinfo comes with the read-only /usr.
	return os.Symlink("/usr/share/zoneinfo/Etc/UTC", filepath.Join(dir, "localtime"))
}

// sharedEtcDir is the directory, beside the sandboxes' own, of the /etc files all share.
const sharedEtcDir = ".etc-shared"

// sharedEtcFiles are those files (paths relative to /etc).
var sharedEtcFiles = []string{"nsswitch.conf", "resolv.conf", "ld.so.cache", "ssl/certs/ca-certificates.crt"}

var sharedEtcMu sync.Mutex

// sharedEtc makes dir with the shared /etc files unless it is there (a platform removes its
// sandboxes' directory, and with it this one, when it starts).
func sharedEtc(dir string) (string, error) {
	sharedEtcMu.Lock()
	defer sharedEtcMu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, "nsswitch.conf")); err == nil {
		return dir, nil
	}
	err := func() (err error) {
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err = os.MkdirAll(tmp, 0o755); err != nil {
			return err
		}
		files := map[string]string{
			"nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n" +
				"networks: files\nprotocols: files\nservices: files\n",
		}
		// The host's resolver settings matter only with --network host (an isolated sandbox has
		// no route to a name server), but they are what a process there would need.
		resolv, err := os.ReadFile("/etc/resolv.conf")
		if err != nil {
			resolv = nil
		}
		files["resolv.conf"] = string(resolv)
		for name, content := range files {
			if err = os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o644); err != nil {
				return err
			}
		}
		for _, name := range []string{"ld.so.cache", "ssl/certs/ca-certificates.crt"} {
			if err := copyFile("/etc/"+name, filepath.Join(tmp, name)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		os.RemoveAll(dir)
		return os.Rename(tmp, dir)
	}()
	return dir, err
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// sharedDirUserns returns a user namespace mapping SandboxUID to the sandbox's uid, for an
// idmapped mount of the shared directory: like an EFS access point, which makes every client
// one POSIX user, every sandbox then creates files there as uid/gid 1051 and can rewrite and
// remove the others' files, while its processes keep their own uid. The namespace belongs to
// a short-lived child (the platform itself in hold mode); the returned file keeps it alive.
func sharedDirUserns(uid int) (*os.File, error) {
	// /proc/self/exe: the child runs as the overflow uid of its new namespace and may not be
	// able to walk the directories to our binary by name (go test's are 0700).
	cmd := exec.Command("/proc/self/exe", SandboxInitArg, `{"hold":true}`)
	cmd.Env = []string{}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Root is mapped to itself as well: a directory whose on-disk owner the mapping does not
	// cover cannot be written through an idmapped mount at all (the kernel refuses writes to
	// inodes with unmapped ids), and shared directories are usually made by root, mode 1777.
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: SandboxUID, HostID: uid, Size: 1}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings: ids, GidMappings: ids, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("user namespace for the shared directory: %w", err)
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
	stdin.Close()
	cmd.Wait()
	if err != nil {
		return nil, err
	}
	return ns, nil
}

// holdUntilStdinCloses is the hold mode's whole life (see sharedDirUserns).
func holdUntilStdinCloses() {
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
