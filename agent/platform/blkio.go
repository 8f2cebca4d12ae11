package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Block I/O limits: a calibrated profile throttles each sandbox's /tmp device, and the shared
// file system's device has one throughput budget for all sandboxes together (EFS's, shareddev.go).
// The kernel's blk-throttle does both, per (cgroup, device):
//
//   - cgroup v1 (blkio.throttle.{read,write}_{bps,iops}_device): blk-throttle is FLAT there — a
//     parent's limit does not cap its children's sum (block/blk-throttle.c keeps the "broken
//     flat hierarchy" on v1; a test on Linux 6.18 confirms it: two child groups each read at
//     full speed under a parent limited to 10 MiB/s). So every sandbox of a platform joins ONE
//     blkio group, the platform's own (blkio/<parent>), while its CPU, memory and pids groups
//     stay its own: the v1 hierarchies are separate. Limits are per device in that group, so a
//     sandbox's /tmp loop device (private to it) carries that sandbox's limits, and the shared
//     device's limit is one budget consumed by every sandbox's I/O to it.
//   - cgroup v2 (io.max) is hierarchical: the sandbox's own group carries its /tmp device's
//     limits and the platform's parent group the shared device's budget.
//
// What is throttled is what a function's own context submits to the device: direct I/O, reads
// that miss the page cache, and writes it forces out (fsync, O_SYNC). Dirty pages the kernel's
// flusher writes back later are charged to the sandbox only with cgroup v2's writeback
// accounting; on v1 they are not throttled.

// blkioTarget is where a device's limits are written: a v1 blkio group or a v2 group's io.max.
type blkioTarget struct {
	Dir string `json:"dir"` // "" = no block I/O controller: limits cannot be applied
	V2  bool   `json:"v2"`
}

// blkioV1Available reports whether the host mounts the v1 blkio hierarchy.
func blkioV1Available() bool {
	_, err := os.Stat(filepath.Join(blkioV1Dir(""), "blkio.throttle.read_bps_device"))
	return err == nil
}

// blkioV1Dir is parent's group in the v1 blkio hierarchy.
func blkioV1Dir(parent string) string { return filepath.Join(cgroupRoot, "blkio", parent) }

// platformBlkio is the platform's block I/O group: v1 blkio/<parent>, which every sandbox joins,
// or the v2 parent whose io.max caps its sandboxes together.
func platformBlkio(parent string) (blkioTarget, error) {
	switch CgroupVersion() {
	case 1:
		if !blkioV1Available() {
			return blkioTarget{}, nil
		}
		d := blkioV1Dir(parent)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return blkioTarget{}, fmt.Errorf("create blkio group %s: %w", d, err)
		}
		return blkioTarget{Dir: d}, nil
	case 2:
		d := filepath.Join(cgroupRoot, parent)
		if _, err := os.Stat(filepath.Join(d, "io.max")); err != nil {
			return blkioTarget{}, nil // the io controller is not delegated here
		}
		return blkioTarget{Dir: d, V2: true}, nil
	}
	return blkioTarget{}, nil
}

// removePlatformBlkio deletes the platform's v1 blkio group once its sandboxes are gone (and
// the level above when no other platform uses it); v2's is the parent group, removed with it.
func removePlatformBlkio(parent string) {
	if CgroupVersion() != 1 || !blkioV1Available() {
		return
	}
	root := blkioV1Dir("")
	for p := parent; p != "." && p != "/" && p != ""; p = filepath.Dir(p) {
		if os.Remove(filepath.Join(root, p)) != nil {
			break
		}
	}
}

// throttleDevice sets dev's ("major:minor") limits in t; zero limits remove any rule.
func throttleDevice(t blkioTarget, dev string, b BlockIO) error {
	if t.Dir == "" {
		return nil // no controller: the platform said so when it started (Status.BlockIO)
	}
	if t.V2 {
		v := func(n int64) string {
			if n <= 0 {
				return "max"
			}
			return strconv.FormatInt(n, 10)
		}
		line := fmt.Sprintf("%s rbps=%s wbps=%s riops=%s wiops=%s", dev, v(b.ReadBps), v(b.WriteBps),
			v(b.ReadIOPS), v(b.WriteIOPS))
		if err := os.WriteFile(filepath.Join(t.Dir, "io.max"), []byte(line), 0); err != nil {
			return fmt.Errorf("io.max %s: %w", line, err)
		}
		return nil
	}
	for _, w := range []struct {
		file string
		n    int64
	}{{"blkio.throttle.read_bps_device", b.ReadBps}, {"blkio.throttle.write_bps_device", b.WriteBps},
		{"blkio.throttle.read_iops_device", b.ReadIOPS}, {"blkio.throttle.write_iops_device", b.WriteIOPS}} {
		line := dev + " " + strconv.FormatInt(max(w.n, 0), 10)
		if err := os.WriteFile(filepath.Join(t.Dir, w.file), []byte(line), 0); err != nil {
			return fmt.Errorf("%s %s: %w", w.file, line, err)
		}
	}
	return nil
}

// blkioTarget is where this sandbox's /tmp device limits go.
func (cg *Cgroup) blkioTarget() blkioTarget {
	if cg == nil {
		return blkioTarget{}
	}
	if cg.v2 {
		d := cg.dirs[""]
		if _, err := os.Stat(filepath.Join(d, "io.max")); err != nil {
			return blkioTarget{}
		}
		return blkioTarget{Dir: d, V2: true}
	}
	return blkioTarget{Dir: cg.blkio}
}
