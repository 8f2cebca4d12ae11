package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where cgroup hierarchies are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// Lambda caps processes and threads per sandbox at 1,024.
const pidsLimit = 1024

// Cgroup is one sandbox's control group, written directly to cgroupfs as nsjail does.
// It supports cgroup v1 (one directory per controller) and the unified v2 hierarchy.
type Cgroup struct {
	v2   bool
	dirs map[string]string // controller ("cpu", "memory", "pids", or "" for v2) → directory
	// blkio is the platform's v1 blkio group, which every sandbox joins (blkio.go); "" = none.
	// It is not the sandbox's own: never renamed or removed with it.
	blkio string
}

// CgroupVersion reports which cgroup layout this host uses: 1, 2, or 0 when neither is usable.
func CgroupVersion() int {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return 2
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "memory", "memory.limit_in_bytes")); err == nil {
		return 1
	}
	return 0
}

var v1Controllers = []string{"cpu", "memory", "pids"}

// v1Optional are joined where the host mounts them: cpuacct for the sandbox's CPU time (it is
// its own hierarchy on some hosts, co-mounted with cpu on others, where both names reach one
// directory) and freezer, which stops an idle sandbox between invocations (freeze.go).
var v1Optional = []string{"cpuacct", "freezer"}

func v1Hierarchies() []string {
	all := append([]string{}, v1Controllers...)
	for _, c := range v1Optional {
		if _, err := os.Stat(filepath.Join(cgroupRoot, c, "cgroup.procs")); err == nil {
			all = append(all, c)
		}
	}
	return all
}

// NewCgroup creates the group at parent/name (parent is relative, e.g. "faascope/<platform-id>")
// and applies the limits.
func NewCgroup(parent, name string, lim Limits) (*Cgroup, error) {
	cg := &Cgroup{dirs: map[string]string{}}
	switch CgroupVersion() {
	case 1:
		for _, c := range v1Hierarchies() {
			d := filepath.Join(cgroupRoot, c, parent, name)
			if err := os.MkdirAll(d, 0o755); err != nil {
				cg.Remove()
				return nil, fmt.Errorf("create cgroup %s: %w", d, err)
			}
			cg.dirs[c] = d
		}
		if blkioV1Available() {
			b, err := platformBlkio(parent)
			if err != nil {
				cg.Remove()
				return nil, err
			}
			cg.blkio = b.Dir
		}
	case 2:
		cg.v2 = true
		if err := enableV2Controllers(parent); err != nil {
			return nil, err
		}
		d := filepath.Join(cgroupRoot, parent, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup %s: %w", d, err)
		}
		cg.dirs[""] = d
	default:
		return nil, errors.New("no usable cgroup hierarchy under /sys/fs/cgroup")
	}
	if err := cg.apply(lim); err != nil {
		cg.Remove()
		return nil, err
	}
	return cg, nil
}

// enableV2Controllers turns on cpu, memory and pids for every level from the root to parent,
// since a v2 child only gets the controllers its parent delegates.
func enableV2Controllers(parent string) error {
	dir := cgroupRoot
	for _, part := range append([]string{""}, strings.Split(parent, "/")...) {
		dir = filepath.Join(dir, part)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu +memory +pids"), 0); err != nil {
			return fmt.Errorf("delegate controllers in %s: %w", dir, err)
		}
		// io (block I/O limits, blkio.go) where the host has it; without it only those go.
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+io"), 0)
	}
	return nil
}

func (cg *Cgroup) apply(lim Limits) error {
	// A sandbox starts in its INIT phase: its CPU quota is the INIT one (initcpu.go) until the
	// runtime's first /next.
	quota, period := int64(-1), int64(defaultCFSPeriodUs)
	if lim.VCPU > 0 {
		quota, period = lim.initCPUQuota() // initcpu.go, cpuperiod.go, cpuspeed.go
	}
	if err := cg.setCPU(quota, period); err != nil {
		return err
	}
	if cg.v2 {
		writes := [][2]string{{"pids.max", strconv.Itoa(pidsLimit)}}
		if lim.MemoryBytes > 0 {
			mem := strconv.FormatInt(lim.MemoryBytes, 10)
			writes = append(writes, [2]string{"memory.max", mem}, [2]string{"memory.swap.max", "0"})
		}
		for _, w := range writes {
			if err := cg.write("", w[0], w[1]); err != nil && !(w[0] == "memory.swap.max" && os.IsNotExist(err)) {
				return err
			}
		}
		return nil
	}
	if err := cg.write("pids", "pids.max", strconv.Itoa(pidsLimit)); err != nil {
		return err
	}
	if lim.MemoryBytes > 0 {
		mem := strconv.FormatInt(lim.MemoryBytes, 10)
		if err := cg.write("memory", "memory.limit_in_bytes", mem); err != nil {
			return err
		}
		// Functions have no swap: cap memory+swap at the same value where the kernel accounts swap.
		if err := cg.write("memory", "memory.memsw.limit_in_bytes", mem); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func (cg *Cgroup) write(controller, file, value string) error {
	err := os.WriteFile(filepath.Join(cg.dirs[controller], file), []byte(value), 0)
	if err != nil {
		return fmt.Errorf("cgroup %s=%s: %w", file, value, err)
	}
	return nil
}

func (cg *Cgroup) read(controller, file string) string {
	b, _ := os.ReadFile(filepath.Join(cg.dirs[controller], file))
	return strings.TrimSpace(string(b))
}

// Add moves a process into the group.
func (cg *Cgroup) Add(pid int) error {
	for c := range cg.dirs {
		if err := cg.write(c, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	if cg.blkio != "" {
		if err := os.WriteFile(filepath.Join(cg.blkio, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join blkio group: %w", err)
		}
	}
	return nil
}

// rename gives the group another name under the same parent (a spare's group becomes its
// instance's: spares.go). Co-mounted controllers (cpu and cpuacct) share a directory, renamed once.
func (cg *Cgroup) rename(name string) error {
	for c, d := range cg.dirs {
		to := filepath.Join(filepath.Dir(d), name)
		if err := os.Rename(d, to); err != nil {
			if _, serr := os.Stat(to); serr != nil {
				return fmt.Errorf("rename cgroup %s: %w", d, err)
			}
		}
		cg.dirs[c] = to
	}
	return nil
}

// Dirs maps each controller to its directory, for bind-mounting into the sandbox.
func (cg *Cgroup) Dirs() map[string]string { return cg.dirs }

// V2 reports whether this is a unified-hierarchy group.
func (cg *Cgroup) V2() bool { return cg.v2 }

// OOMKills counts the kernel's out-of-memory kills inside the group.
func (cg *Cgroup) OOMKills() int64 {
	file, ctrl := "memory.oom_control", "memory"
	if cg.v2 {
		file, ctrl = "memory.events", ""
	}
	for _, line := range strings.Split(cg.read(ctrl, file), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// PeakMemory is the highest memory use seen, for Lambda's "Max Memory Used".
func (cg *Cgroup) PeakMemory() int64 {
	v := cg.read("memory", "memory.max_usage_in_bytes")
	if cg.v2 {
		v = cg.read("", "memory.peak")
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// Pids lists the processes in the group. The platform's own process is never one of them,
// though one of its threads may sit in the cpu group (a device thread, devicecpu.go): killing
// "everything in the group" must not kill the platform.
func (cg *Cgroup) Pids() []int {
	var pids []int
	self := os.Getpid()
	for c := range cg.dirs {
		for _, f := range strings.Fields(cg.read(c, "cgroup.procs")) {
			if p, err := strconv.Atoi(f); err == nil && p != self {
				pids = append(pids, p)
			}
		}
		break // every controller holds the same processes
	}
	return pids
}

// Kill sends SIGKILL to every process in the group, then thaws it: a frozen process takes
// the signal only once it runs again.
func (cg *Cgroup) Kill() {
	defer cg.Thaw()
	if cg.v2 {
		if cg.write("", "cgroup.kill", "1") == nil {
			return
		}
	}
	for _, p := range cg.Pids() {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// CanFreeze reports whether the group has a freezer.
func (cg *Cgroup) CanFreeze() bool {
	if cg.v2 {
		return cg.dirs[""] != ""
	}
	return cg.dirs["freezer"] != ""
}

// Freeze stops every process in the group where it stands (the v1 freezer's FROZEN state, v2's
// cgroup.freeze): no CPU time, no progress, until Thaw.
func (cg *Cgroup) Freeze() error {
	if cg.v2 {
		return cg.write("", "cgroup.freeze", "1")
	}
	if cg.dirs["freezer"] == "" {
		return nil
	}
	return cg.write("freezer", "freezer.state", "FROZEN")
}

// Thaw lets a frozen group run again (a no-op on one that is not frozen).
func (cg *Cgroup) Thaw() error {
	if cg.v2 {
		if cg.dirs[""] == "" {
			return nil
		}
		return cg.write("", "cgroup.freeze", "0")
	}
	if cg.dirs["freezer"] == "" {
		return nil
	}
	return cg.write("freezer", "freezer.state", "THAWED")
}

// Remove kills what is left in the group and deletes it, retrying while the kernel
// finishes tearing processes down.
func (cg *Cgroup) Remove() error {
	var last error
	for attempt := 0; attempt < 50; attempt++ {
		cg.Kill()
		last = nil
		for c, d := range cg.dirs {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				last = err
				continue
			}
			delete(cg.dirs, c)
		}
		if last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

// parentDirs are parent's directories in every hierarchy the platform uses.
func parentDirs(parent string) []string {
	roots := []string{filepath.Join(cgroupRoot, parent)}
	if CgroupVersion() == 1 {
		roots = nil
		for _, c := range v1Hierarchies() {
			roots = append(roots, filepath.Join(cgroupRoot, c, parent))
		}
	}
	return roots
}

// RemoveParentCgroups deletes the platform's own parent groups when it stops (its sandboxes'
// groups are gone by then), and the "faascope" level above them when no other platform uses it.
func RemoveParentCgroups(parent string) {
	for _, d := range parentDirs(parent) {
		hierarchy := strings.TrimSuffix(d, parent)
		for p := parent; p != "." && p != "/" && p != ""; p = filepath.Dir(p) {
			if os.Remove(filepath.Join(hierarchy, p)) != nil {
				break // not empty (another platform's, or a sandbox still dying) or gone
			}
		}
	}
}

// RemoveStaleCgroups deletes groups left under parent by a platform that crashed.
func RemoveStaleCgroups(parent string) {
	roots := parentDirs(parent)
	// A crashed platform may have left sandboxes frozen: they die of SIGKILL only once thawed.
	for _, root := range roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			_ = os.WriteFile(filepath.Join(root, e.Name(), "freezer.state"), []byte("THAWED"), 0)
		}
	}
	for _, root := range roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			d := filepath.Join(root, e.Name())
			stale := &Cgroup{v2: CgroupVersion() == 2, dirs: map[string]string{"x": d}}
			if stale.v2 {
				stale.dirs = map[string]string{"": d}
			}
			_ = stale.Remove()
		}
	}
}
