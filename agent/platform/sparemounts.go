package platform

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A sandbox's mount namespace starts (clone with CLONE_NEWNS) as a copy of the host's whole mount
// table, and a spare waits with that copy until a cold start claims it (spares.go). A copy is a
// mount of its own: unmounting the original on the host (as a platform does with its host disk
// when it stops, or faascope with a stand-in's tmpfs) does not unmount it, and on a host whose
// mounts are private (no propagation, as in most containers) nothing ever does. The spare then
// pins the file system: issue #29 saw a stopped platform's host disk stay mounted, its loop
// device attached to a deleted 1 TiB image, inside another platform's spare.
//
// So the init, before it waits, keeps of the copy only what its root is built from: the
// directories its platform names (its data directory, its shared directory: spareSources) and
// the system's (spareSystemMounts); every other mount is detached. Its mounts become slaves
// first: the detaching must not propagate back to the host (a copy of a shared mount is in the
// host mount's peer group), while the host's own later unmounts still reach the spare where the
// host's mounts are shared. At the claim, buildRoot makes the rest private and pivot_root leaves
// the sandbox its own mounts alone.

// spareMountsEnv carries the spare's mount plan (spareMountPlan, JSON) to its init. The init
// acts on it only with it: a process started any other way (a test's init, the hold mode of
// sharedDirUserns) never detaches anything.
const spareMountsEnv = "FAASCOPE_SPARE_MOUNTS"

// spareMountPlan is what the host tells a spare's init of its mounts.
type spareMountPlan struct {
	// HostNS is the inode of the host's mount namespace: an init that finds itself in it (no
	// namespace of its own) refuses to detach anything, since that would unmount the host's.
	HostNS uint64 `json:"host_ns"`
	// Keep are the host directories the sandbox's root is built from: each, with every mount
	// under it and on the way to it, stays.
	Keep []string `json:"keep"`
}

// spareSystemMounts are what buildRoot binds of the system's, or needs to find devices and
// cgroups: trees kept whole, and mount points kept without the mounts under them (/dev/pts,
// /dev/shm, /proc/sys/fs/binfmt_misc and the like go).
var (
	spareSystemTrees  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc", "/sys/fs/cgroup"}
	spareSystemPoints = []string{"/dev", "/proc", "/sys"}
)

// spareMountsEnviron is the spare's environment entry for keep (the platform's directories).
func spareMountsEnviron(keep []string) (string, error) {
	plan := spareMountPlan{}
	for _, k := range keep {
		if k != "" {
			plan.Keep = append(plan.Keep, k)
		}
	}
	if len(plan.Keep) == 0 {
		return "", fmt.Errorf("spare sandbox: no host directories to build its root from")
	}
	ino, err := mountNSInode("/proc/self/ns/mnt")
	if err != nil {
		return "", err
	}
	plan.HostNS = ino
	b, err := json.Marshal(plan)
	return spareMountsEnv + "=" + string(b), err
}

func mountNSInode(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, fmt.Errorf("mount namespace: %w", err)
	}
	return st.Ino, nil
}

// dropHostMounts is the init's part: with no plan in its environment it does nothing.
func dropHostMounts() error {
	env := os.Getenv(spareMountsEnv)
	if env == "" {
		return nil
	}
	var plan spareMountPlan
	if err := json.Unmarshal([]byte(env), &plan); err != nil {
		return fmt.Errorf("spare mount plan: %w", err)
	}
	own, err := mountNSInode("/proc/self/ns/mnt")
	if err != nil {
		return err
	}
	if own == plan.HostNS {
		return fmt.Errorf("spare mount plan: the init shares the host's mount namespace")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts slaves: %w", err)
	}
	mounts, err := readMountinfo("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	trees := append([]string(nil), spareSystemTrees...)
	for _, k := range plan.Keep {
		if r, err := filepath.EvalSymlinks(k); err == nil { // mountinfo names real paths
			k = r
		}
		trees = append(trees, filepath.Clean(k))
	}
	for _, point := range mountsToDetach(mounts, trees, spareSystemPoints) {
		// Every mount stacked at point, top first; EINVAL once point is no mount's root.
		for i := 0; i < 64; i++ {
			if err := unix.Unmount(point, unix.MNT_DETACH); err != nil {
				break
			}
		}
	}
	return nil
}

// mountEntry is one line of a mountinfo file: the mount's id, its parent's, its mount point,
// and after the "-" separator its file system type and source.
type mountEntry struct {
	ID, Parent     int
	Point          string
	FSType, Source string
}

func readMountinfo(path string) ([]mountEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		id, err1 := strconv.Atoi(fields[0])
		parent, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			continue
		}
		e := mountEntry{ID: id, Parent: parent, Point: unescapeMountinfo(fields[4])}
		// id parent major:minor root mountpoint options [optional ...] - fstype source superoptions
		for i, x := range fields[5:] {
			if x == "-" && 5+i+2 < len(fields) {
				e.FSType, e.Source = fields[5+i+1], unescapeMountinfo(fields[5+i+2])
				break
			}
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space, \011, \012, \134).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pathWithin says whether p is dir or under it.
func pathWithin(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// mountsToDetach is the mount points to detach so that only these stay: mounts on the way to a
// tree or a point, mounts in a tree, and the points themselves. Only the topmost of a detached
// subtree is named (detaching it takes the mounts under it).
func mountsToDetach(mounts []mountEntry, trees, points []string) []string {
	kept := func(m mountEntry) bool {
		for _, t := range trees {
			if pathWithin(m.Point, t) || pathWithin(t, m.Point) {
				return true
			}
		}
		for _, p := range points {
			if pathWithin(p, m.Point) {
				return true
			}
		}
		return false
	}
	keep := map[int]bool{}
	for _, m := range mounts {
		keep[m.ID] = kept(m)
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range mounts {
		parentKept, known := keep[m.Parent]
		if keep[m.ID] || (known && !parentKept) || seen[m.Point] {
			continue
		}
		seen[m.Point] = true
		out = append(out, m.Point)
	}
	return out
}
