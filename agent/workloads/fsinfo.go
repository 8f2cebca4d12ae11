package workloads

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fsType names the file system holding fd; it tells a disk-backed /tmp (Lambda) from an
// in-memory one (GCF), which changes what every fileio number means.
func fsType(fd int) (name string, inMemory bool) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return "unknown", false
	}
	switch int64(st.Type) {
	case unix.TMPFS_MAGIC:
		return "tmpfs", true
	case unix.RAMFS_MAGIC:
		return "ramfs", true
	case unix.EXT4_SUPER_MAGIC: // shared by ext2, ext3 and ext4
		return "ext4", false
	case unix.XFS_SUPER_MAGIC:
		return "xfs", false
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs", false
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlay", false
	case unix.NFS_SUPER_MAGIC:
		return "nfs", false
	case unix.FUSE_SUPER_MAGIC:
		return "fuse", false
	case unix.V9FS_MAGIC:
		return "9p", false
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs", false
	}
	return fmt.Sprintf("0x%x", uint64(st.Type)), false
}

// alignedBuffer returns page-aligned memory, as O_DIRECT needs, from an anonymous mapping so it
// can be returned to the kernel right after the run instead of waiting for the GC: a 1 GiB
// buffer left around would count against the sandbox's memory limit.
func alignedBuffer(size int64) ([]byte, func(), error) {
	b, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil, &Error{Type: Internal, Message: fmt.Sprintf("allocating a %d-byte buffer: %v", size, err)}
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}
