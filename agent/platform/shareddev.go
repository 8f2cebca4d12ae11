package platform

import (
	"fmt"
	"log"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The shared file system (--shared-dir, /mnt/shared in every sandbox) stands in for EFS, whose
// throughput is one budget for all its clients ("Amazon EFS performance": a file system in
// Bursting mode bursts to 100 MiB/s of metered throughput, whoever drives it), so concurrent
// writers contend: the IISWC 2021 study of S3 vs EFS on Lambda saw EFS write time grow
// linearly with concurrency. A directory on the host disk has no such budget (and shares the
// disk with everything else). When the platform's profile has a shared budget in its
// calibration, the directory is served by the platform through FUSE while it runs, every read
// and write metered against that one budget (sharedfs.go): like EFS, a file system served over
// a protocol, whose server every client's I/O passes.
//
// The directory stays what users and the host see before and after: the FUSE mount serves the
// directory's own content (the host sees it through the mount while the platform runs), so
// there is nothing to copy back when the platform stops and unmounts it. A platform killed
// outright leaves a dead mount: the next start detaches it.
//
// Not modelled: EFS's per-operation latency (Skyrise: 11.25 ms median for a 1 KB write, 5.15 ms
// for a read), nor its burst credits: the budget is the burst rate, always.

// sharedDevice is the shared directory's metered file system while the platform runs.
type sharedDevice struct {
	fs     *sharedFS
	budget BlockIO
}

// mountSharedDevice serves dir through the metered file system with the budget.
func mountSharedDevice(dir string, budget BlockIO) (*sharedDevice, error) {
	s, err := mountSharedFS(dir, budget)
	if err != nil {
		return nil, err
	}
	return &sharedDevice{fs: s, budget: budget}, nil
}

// unmountStale removes the mount a crashed platform left over dir (its FUSE file system, or
// the ext4 loop device earlier versions mounted there).
func unmountStale(dir string) {
	mounts, _ := readMountinfo("/proc/self/mountinfo") // sparemounts.go
	for _, m := range mounts {
		if m.Point == dir && (m.FSType == "ext4" && strings.HasPrefix(m.Source, "/dev/loop") ||
			m.FSType == "fuse.faascope") {
			unix.Unmount(dir, unix.MNT_DETACH)
			return
		}
	}
}

// close unmounts the file system; the data is in the directory already.
func (d *sharedDevice) close() {
	if d == nil {
		return
	}
	d.fs.close()
}

// sharedBudget is the budget the shared file system has (zero when none).
func (p *Platform) sharedBudget() BlockIO {
	if p.shared == nil {
		return BlockIO{}
	}
	return p.shared.budget
}

// setupBlockIO finds the platform's block I/O group and, when the default profile's
// calibration gives the shared file system a budget, serves the shared directory through its meter.
// Before the spares are made: their mount namespaces are copies of the host's at that moment.
func (p *Platform) setupBlockIO() error {
	var err error
	if p.blkio, err = platformBlkio(p.cgroupDir); err != nil {
		return err
	}
	p.tmpDirectIO = DirectIOSupported(p.cfg.DataDir)
	calibrated := p.cfg.Calibration.profile(p.cfg.DefaultProfile) != nil
	if calibrated && p.blkio.Dir == "" {
		log.Printf("WARNING: no block I/O controller (cgroup v1 blkio, v2 io): the calibrated /tmp and shared file system limits are not applied")
	}
	if calibrated && !p.tmpDirectIO {
		log.Printf("WARNING: %s has no direct I/O: /tmp loop devices read through the host's page cache", p.cfg.DataDir)
	}
	budget := p.cfg.Calibration.sharedBudget(p.cfg.DefaultProfile)
	if p.cfg.SharedDir == "" || budget.Zero() {
		return nil
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		// As without a block I/O controller: the platform runs, its status says there is no
		// budget (shared_budget is zero, and results record it), and the log says why.
		log.Printf("WARNING: no /dev/fuse (modprobe fuse): the shared file system's calibrated budget is not applied")
		return nil
	}
	if p.shared, err = mountSharedDevice(p.cfg.SharedDir, budget); err != nil {
		return fmt.Errorf("shared file system: %w", err)
	}
	return nil
}
