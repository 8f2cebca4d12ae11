package platform

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maskedProcPaths are the parts of a sandbox's /proc that would show it the host or its
// neighbours, masked as container runtimes mask them: runc's and Docker's default masked paths
// (acpi, asound, kcore, keys, latency_stats, timer_list, timer_stats, sched_debug, scsi), plus
// what procfs shows of the other sandboxes here, where they share one kernel (on Lambda every
// sandbox is a VM of its own, whose /proc shows nothing of another's): key-users (every uid's
// key quota use, i.e. which sandboxes hold keys), locks (every file lock on the host, the
// platform's uid locks included), kallsyms (the kernel's symbol names, with addresses zeroed for
// a non-root reader but still a map of what is loaded) and config.gz (the host kernel's build
// configuration). A file is covered by /dev/null (reads give nothing, as runc does it), a
// directory by an empty read-only tmpfs; a path this kernel lacks is skipped.
var maskedProcPaths = []string{
	"acpi", "asound", "kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug",
	"scsi", "key-users", "locks", "kallsyms", "config.gz",
}

// maskProc masks maskedProcPaths under proc, a procfs just mounted for the sandbox (before the
// pivot, while the init still has the host's /dev/null and every capability).
func maskProc(proc string) error {
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	for _, name := range maskedProcPaths {
		p := filepath.Join(proc, name)
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("mask /proc/%s: %w", name, err)
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", flags|unix.MS_RDONLY, "size=4k,mode=555")
		} else {
			err = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("mask /proc/%s: %w", name, err)
		}
	}
	return nil
}
