package platform

import (
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// "Max Memory Used" in the REPORT line is the peak of the sandbox's memory cgroup
// (memory.max_usage_in_bytes, v2 memory.peak) over the instance's life: the function's
// anonymous memory, the page cache of the files it reads, maps or writes (its /tmp too), and
// kernel memory charged to it. The kernel charges a cached page to the cgroup that first
// brought it in, so the package's files, unpacked by the platform, would be cached on the
// platform's account: a function mapping a 40 MB file of its package reported 1 MB while its
// RSS was 47 MB. Lambda's function reads its code inside its own execution environment, so
// the package's pages are its memory there; uncacheUnpacked makes them so here.

// uncacheUnpacked writes the unpacked package to disk and drops its pages from the page
// cache, so the function's first read of each file charges the sandbox's cgroup.
func uncacheUnpacked(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	// One syncfs instead of an fsync per file: dirty pages cannot be dropped.
	err = unix.Syncfs(int(d.Fd()))
	d.Close()
	if err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	})
}
