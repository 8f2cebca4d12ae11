package platform

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A loop device without direct I/O reads and writes its backing file through the host's page
// cache: a function's O_DIRECT reads of its /tmp are then served from host memory (~25 µs for
// 512 B, a 1 GB read three times faster than the disk), and every page the function caches in
// its own memory cgroup has a second copy in the host's cache, charged to no sandbox. With
// LO_FLAGS_DIRECT_IO the loop device reads and writes the backing file with O_DIRECT: what
// reaches the device reaches the disk, and the only cache is the one inside the sandbox's
// memory cgroup (the ext4 /tmp's own page cache).
//
// Direct I/O needs the loop device's logical block size to be a multiple of the backing
// file's direct-I/O alignment (the disk's logical block size), else the kernel silently keeps
// buffered I/O: the block size is set to that alignment, which statx reports as
// STATX_DIOALIGN (Linux 6.1+). The ext4 inside uses 4,096-byte blocks (makeExt4), a multiple
// of every logical block size (512 or 4,096).

// loopDevice is an attached loop device: its node, its device number and an open handle
// (an auto-clearing device detaches when its last opener goes, so hold it until mounted).
type loopDevice struct {
	Path         string
	Major, Minor uint32
	DirectIO     bool
	f            *os.File
}

func (d *loopDevice) devNumber() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// Close drops the handle (the device stays attached while it is mounted).
func (d *loopDevice) Close() error { return d.f.Close() }

// dioAlignment is the alignment direct I/O on path needs, 0 when the file system has none.
func dioAlignment(path string) uint32 {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_DIOALIGN, &st); err != nil ||
		st.Mask&unix.STATX_DIOALIGN == 0 {
		return 0
	}
	return st.Dio_offset_align
}

// DirectIOSupported reports whether files in dir can be read and written with O_DIRECT (the
// loop devices' backing images live there; tmpfs before Linux 6.6, for one, cannot). A
// directory itself has no direct I/O: a file in it is asked.
func DirectIOSupported(dir string) bool {
	f, err := os.CreateTemp(dir, ".dio-probe-*")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	f.Close()
	return dioAlignment(f.Name()) > 0
}

// attachLoopDIO binds image to a free loop device that detaches itself when unmounted, with
// direct I/O on where the backing file system allows it.
func attachLoopDIO(image string) (*loopDevice, error) {
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("loop devices unavailable: %w", err)
	}
	defer ctl.Close()
	backing, err := os.OpenFile(image, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer backing.Close()
	align := dioAlignment(image)
	cfg := unix.LoopConfig{Fd: uint32(backing.Fd())}
	cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
	if align > 0 {
		cfg.Info.Flags |= unix.LO_FLAGS_DIRECT_IO
		cfg.Size = max(align, 512) // the loop's logical block size; 512 is the least there is
	}
	// Other sandboxes race for the same free device: retry on EBUSY.
	for attempt := 0; attempt < 100; attempt++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("find a free loop device: %w", err)
		}
		path := "/dev/loop" + strconv.Itoa(n)
		f, err := openLoop(path)
		if err != nil {
			return nil, err
		}
		err = unix.IoctlLoopConfigure(int(f.Fd()), &cfg)
		if err == nil {
			d := &loopDevice{Path: path, f: f}
			var st unix.Stat_t
			if err := unix.Fstat(int(f.Fd()), &st); err != nil {
				f.Close()
				return nil, err
			}
			d.Major, d.Minor = unix.Major(st.Rdev), unix.Minor(st.Rdev)
			d.DirectIO = loopDirectIO(d)
			return d, nil
		}
		f.Close()
		if err != unix.EBUSY {
			return nil, fmt.Errorf("configure %s: %w", path, err)
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
	return nil, fmt.Errorf("no free loop device after 100 attempts")
}

// loopDirectIO reads back whether the kernel kept direct I/O on (it drops the flag quietly
// when the backing file cannot do it).
func loopDirectIO(d *loopDevice) bool {
	b, err := os.ReadFile(fmt.Sprintf("/sys/dev/block/%d:%d/loop/dio", d.Major, d.Minor))
	return err == nil && strings.TrimSpace(string(b)) == "1"
}
