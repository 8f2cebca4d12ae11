package platform

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The shared file system (--shared-dir, /mnt/shared in every sandbox) stands in for EFS, whose
// throughput is one budget for all its clients ("Amazon EFS performance": a file system in
// Bursting mode bursts to 100 MiB/s of metered throughput, whoever drives it), so concurrent
// writers contend: the IISWC 2021 study of S3 vs EFS on Lambda saw EFS write time grow
// linearly with concurrency. A directory on the host disk has no such budget (and shares the
// disk with everything else). When the platform's profile has a shared budget in its
// calibration, the directory is backed by one ext4 image on one loop device (direct I/O on,
// loopdio.go) mounted over it while the platform runs, and that device is throttled in the
// platform's block I/O group, which every sandbox belongs to (blkio.go): one budget, consumed
// by every sandbox's I/O to it.
//
// The image lives in the data directory, one per shared directory, and persists across runs
// like an EFS file system; it is made, when missing, with the directory's content copied in
// (mkfs.ext4 -d). While the platform runs the directory shows the image; once it stops, the
// directory shows its own content again (what functions wrote stays in the image).
//
// Not modelled: EFS's per-operation latency (Skyrise: 11.25 ms median for a 1 KB write, 5.15 ms
// for a read). A kernel mechanism would be device-mapper's delay target, and this kernel has
// no device mapper; a user-space file system in between would be an imitation, not the
// kernel's I/O path. Nor are EFS's burst credits: the budget is the burst rate, always.

// sharedImageBytes is the image's apparent size: sparse, so only what is written takes space.
const sharedImageBytes = 64 << 30

// sharedDevice is the shared directory's backing device while the platform runs.
type sharedDevice struct {
	dir, image string
	dev        *loopDevice
	budget     BlockIO
}

// sharedImagePath is the image for a shared directory, in the platform's data directory.
func sharedImagePath(dataDir, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(dataDir, "shared-fs", hex.EncodeToString(sum[:6])+".ext4")
}

// mountSharedDevice backs dir by its image, mounted over it, and gives the device its budget in
// the platform's block I/O group.
func mountSharedDevice(dataDir, dir string, group blkioTarget, budget BlockIO) (*sharedDevice, error) {
	if group.Dir == "" {
		return nil, fmt.Errorf("no block I/O controller (cgroup v1 blkio or v2 io) to hold the budget")
	}
	unmountStale(dir)
	image := sharedImagePath(dataDir, dir)
	if _, err := os.Stat(image); os.IsNotExist(err) {
		if err := makeSharedImage(image, dir); err != nil {
			return nil, err
		}
	}
	dev, err := attachLoopDIO(image)
	if err != nil {
		return nil, err
	}
	defer dev.Close() // the mount holds it; auto-clear detaches it at the unmount
	if !dev.DirectIO {
		log.Printf("shared file system: %s has no direct I/O (the data directory's file system cannot): reads may come from the host's cache", dev.Path)
	}
	if err := throttleDevice(group, dev.devNumber(), budget); err != nil {
		return nil, err
	}
	if err := unix.Mount(dev.Path, dir, "ext4", unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return nil, fmt.Errorf("mount %s on %s: %w", dev.Path, dir, err)
	}
	if err := os.Chmod(dir, 0o1777|os.ModeSticky); err != nil {
		unix.Unmount(dir, unix.MNT_DETACH)
		return nil, err
	}
	return &sharedDevice{dir: dir, image: image, dev: dev, budget: budget}, nil
}

// makeSharedImage makes a sparse ext4 image holding dir's current content.
func makeSharedImage(image, dir string) error {
	if err := os.MkdirAll(filepath.Dir(image), 0o700); err != nil {
		return err
	}
	tmp := image + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = f.Truncate(sharedImageBytes)
	f.Close()
	if err != nil {
		os.Remove(tmp)
		return err
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-b", "4096", "-m", "0", "-d", dir,
		"-E", "lazy_itable_init=1,lazy_journal_init=1", tmp).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("mkfs.ext4 (shared file system): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return os.Rename(tmp, image)
}

// unmountStale removes an ext4 mount a crashed platform left over dir.
func unmountStale(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	stale := false
	for sc.Scan() {
		// mountinfo: id parent major:minor root mountpoint options ... - fstype source ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[4] != dir {
			continue
		}
		for i, x := range fields {
			if x == "-" && i+2 < len(fields) && fields[i+1] == "ext4" && strings.HasPrefix(fields[i+2], "/dev/loop") {
				stale = true
			}
		}
	}
	if stale {
		unix.Unmount(dir, unix.MNT_DETACH)
	}
}

// close unmounts the image (the loop device then detaches itself).
func (d *sharedDevice) close() {
	if d == nil {
		return
	}
	if err := unix.Unmount(d.dir, 0); err != nil {
		unix.Unmount(d.dir, unix.MNT_DETACH)
	}
}

// sharedBudget is the budget the shared file system has (zero when none).
func (p *Platform) sharedBudget() BlockIO {
	if p.shared == nil {
		return BlockIO{}
	}
	return p.shared.budget
}

// setupBlockIO finds the platform's block I/O group and, when the default profile's
// calibration gives the shared file system a budget, backs the shared directory by its device.
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
	if p.cfg.SharedDir == "" || budget.Zero() || p.blkio.Dir == "" {
		return nil
	}
	if p.shared, err = mountSharedDevice(p.cfg.DataDir, p.cfg.SharedDir, p.blkio, budget); err != nil {
		return fmt.Errorf("shared file system: %w", err)
	}
	return nil
}
