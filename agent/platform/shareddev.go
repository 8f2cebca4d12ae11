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
	"syscall"

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
// The directory stays what users and the host see before and after: the image is made at each
// start with the directory's content (mkfs.ext4 -d), mounted over it while the platform runs
// (the host sees the image there too), and copied back into the directory when the platform
// stops (files the functions changed or made copied, files they removed removed), then
// unmounted. A platform killed outright leaves its writes in the image only: the next start
// unmounts it and makes a new image from the directory.
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
	under      *os.File // the directory itself, below the mount: where the content goes back
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
	if err := makeSharedImage(image, dir); err != nil {
		return nil, err
	}
	under, err := os.Open(dir) // before the mount covers it
	if err != nil {
		return nil, err
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
		under.Close()
		return nil, fmt.Errorf("mount %s on %s: %w", dev.Path, dir, err)
	}
	if err := os.Chmod(dir, 0o1777|os.ModeSticky); err != nil {
		unix.Unmount(dir, unix.MNT_DETACH)
		under.Close()
		return nil, err
	}
	return &sharedDevice{dir: dir, image: image, dev: dev, budget: budget, under: under}, nil
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

// close copies the image's content back into the directory, unmounts the image (the loop
// device then detaches itself) and removes it.
func (d *sharedDevice) close() {
	if d == nil {
		return
	}
	// The directory below the mount, reached through the descriptor opened before it.
	under := fmt.Sprintf("/proc/self/fd/%d", d.under.Fd())
	if err := syncTree(d.dir, under); err != nil {
		log.Printf("shared file system: copying back into %s: %v (the image stays in %s)", d.dir, err, d.image)
	}
	if err := unix.Unmount(d.dir, 0); err != nil {
		unix.Unmount(d.dir, unix.MNT_DETACH)
	}
	d.under.Close()
	os.Remove(d.image)
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

// syncTree makes dst's tree what src's is: files whose size or modification time differ are
// copied (mode, owner and times kept), directories and symbolic links made, and what src no
// longer has removed from dst. Files that did not change are not copied again.
func syncTree(src, dst string) error {
	keep := map[string]bool{}
	err := filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if rel == "lost+found" && e.IsDir() {
			return filepath.SkipDir // ext4's own, not the user's
		}
		keep[rel] = true
		fi, err := e.Info()
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		to := filepath.Join(dst, rel)
		old, oerr := os.Lstat(to)
		switch {
		case fi.IsDir():
			if oerr == nil && !old.IsDir() {
				os.RemoveAll(to)
			}
			if err := os.MkdirAll(to, 0o700); err != nil {
				return err
			}
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			os.RemoveAll(to)
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if oerr == nil && old.Mode().IsRegular() && old.Size() == fi.Size() && old.ModTime().Equal(fi.ModTime()) {
				return nil
			}
			os.RemoveAll(to)
			if err := copyFile(path, to); err != nil {
				return err
			}
		default:
			return nil // devices, sockets, fifos: not carried over
		}
		if st != nil {
			os.Lchown(to, int(st.Uid), int(st.Gid))
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			os.Chmod(to, fi.Mode()&(os.ModePerm|os.ModeSticky|os.ModeSetuid|os.ModeSetgid))
			os.Chtimes(to, fi.ModTime(), fi.ModTime())
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first, so a directory's entries go before it.
	var gone []string
	// dst may be a link to the directory (/proc/self/fd/N): the trailing slash follows it.
	filepath.WalkDir(dst+"/", func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if rel, _ := filepath.Rel(dst, path); rel != "." && !keep[rel] {
			gone = append(gone, path)
			if e.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	for _, p := range gone {
		os.RemoveAll(p)
	}
	return nil
}
