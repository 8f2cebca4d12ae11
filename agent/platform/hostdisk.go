package platform

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Co-resident sandboxes share their host's disk. Kim & Lee (FunctionBench, IEEE CLOUD 2019;
// "Practical Cloud Workloads for Serverless FaaS", SoCC 2019) ran 1 to N concurrent functions
// on Lambda and saw each one's disk bandwidth fall while the aggregate stayed flat: the
// sandboxes' own limits are not the whole story, the host has one budget they split. A
// sandbox's /tmp loop device carries the sandbox's own limits (blkio.go); with a host budget in
// the lambda table (host_tmp_*), every lambda sandbox's /tmp image lives on one more device, the
// platform's "host disk" (an ext4 image on a direct-I/O loop device mounted at
// <data-dir>/host-disk), throttled in the platform's block I/O group at that budget.
//
// Why a device and not a rule on the data directory's own disk: that disk also holds the
// shared file system's image, the code and the logs, and it is whatever the user's machine
// has. Why this cannot be bypassed: a loop device submits its backing file's I/O in the block
// cgroup of the request it serves (the loop driver's per-cgroup workers), so what a sandbox
// sends to its /tmp device reaches the host disk charged to the platform's group, and the host
// disk's rule applies to all of it together; measured here on Linux 6.18, cgroup v1: two
// direct writers on two nested loop devices under a 20 MiB/s host rule got 10.5 MB/s each,
// one alone 21.4 MB/s, a buffered write with fsync 20.5 MB/s. Buffered writes that no one
// forces out stay in the sandbox's page cache (in its memory limit), as on Lambda, where they
// stay in the microVM's; what the kernel's flusher writes back later is not charged on v1
// (blkio.go) — the same holds for the sandbox's own limits.

// The lambda table's host budget keys (calibration.go reads them).
const (
	keyHostTmpReadBps   = "host_tmp_read_bps"
	keyHostTmpWriteBps  = "host_tmp_write_bps"
	keyHostTmpReadIOPS  = "host_tmp_read_iops"
	keyHostTmpWriteIOPS = "host_tmp_write_iops"
)

// hostDiskImageBytes is the host disk's apparent size: sparse, and mounted with discard, so it
// takes only what the images inside it hold.
const hostDiskImageBytes = 1 << 40

// hostDisk is the device under every lambda sandbox's /tmp image while the platform runs.
type hostDisk struct {
	dir, image string
	budget     BlockIO
}

// hostDiskDir is where the host disk is mounted, in the platform's data directory.
func hostDiskDir(dataDir string) string { return filepath.Join(dataDir, "host-disk") }

// mountHostDisk makes a fresh host disk, mounts it and gives its device the budget in group.
func mountHostDisk(dataDir string, group blkioTarget, budget BlockIO) (*hostDisk, error) {
	dir := hostDiskDir(dataDir)
	unix.Unmount(dir, unix.MNT_DETACH) // what a crashed platform left mounted (EINVAL when nothing)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	image := filepath.Join(dataDir, "host-disk.ext4")
	os.Remove(image)
	f, err := os.Create(image)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(hostDiskImageBytes)
	f.Close()
	if err != nil {
		os.Remove(image)
		return nil, err
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0",
		"-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", image).CombinedOutput()
	if err != nil {
		os.Remove(image)
		return nil, fmt.Errorf("mkfs.ext4 (host disk): %v: %s", err, strings.TrimSpace(string(out)))
	}
	dev, err := attachLoopDIO(image)
	if err != nil {
		os.Remove(image)
		return nil, err
	}
	defer dev.Close() // the mount holds it; auto-clear detaches it at the unmount
	if !dev.DirectIO {
		log.Printf("host disk: %s has no direct I/O: the /tmp images' I/O may come from the host's cache", dev.Path)
	}
	if err := throttleDevice(group, dev.devNumber(), budget); err != nil {
		os.Remove(image)
		return nil, err
	}
	// discard: a removed /tmp image frees its blocks in the host disk's image too
	if err := unix.Mount(dev.Path, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "discard"); err != nil {
		os.Remove(image)
		return nil, fmt.Errorf("mount %s on %s: %w", dev.Path, dir, err)
	}
	return &hostDisk{dir: dir, image: image, budget: budget}, nil
}

// close unmounts the host disk (its loop device then detaches itself) and removes its image.
func (h *hostDisk) close() {
	if h == nil {
		return
	}
	if err := unix.Unmount(h.dir, 0); err != nil {
		unix.Unmount(h.dir, unix.MNT_DETACH)
	}
	os.Remove(h.image)
	os.Remove(h.dir)
}

// hostTmpBudget is the host disk's budget under a profile's calibration (zero when none).
func (c *Calibration) hostTmpBudget(profile string) BlockIO {
	if pc := c.profile(profile); pc != nil {
		return pc.hostTmp
	}
	return BlockIO{}
}

// setupHostDisk backs the lambda sandboxes' /tmp images by the host disk when the lambda table
// gives it a budget and the host has a block I/O controller; the tmp pool then keeps its images
// there. Before the spares are made: their mount namespaces are copies of the host's.
func (p *Platform) setupHostDisk() error {
	budget := p.cfg.Calibration.hostTmpBudget(ProfileLambda)
	if budget.Zero() || p.blkio.Dir == "" || p.tmpPool == nil {
		return nil
	}
	var err error
	if p.hostDisk, err = mountHostDisk(p.cfg.DataDir, p.blkio, budget); err != nil {
		return fmt.Errorf("host disk: %w", err)
	}
	p.tmpPool.close()
	if p.tmpPool, err = newTmpPool(filepath.Join(p.hostDisk.dir, "tmp-images")); err != nil {
		return err
	}
	p.tmpPool.sandboxDir = filepath.Join(p.hostDisk.dir, "sandboxes")
	return os.MkdirAll(p.tmpPool.sandboxDir, 0o700)
}

// hostTmpBudgetInForce is the host disk's budget while the platform runs (zero when none).
func (p *Platform) hostTmpBudgetInForce() BlockIO {
	if p.hostDisk == nil {
		return BlockIO{}
	}
	return p.hostDisk.budget
}
