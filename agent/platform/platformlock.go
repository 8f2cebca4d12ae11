package platform

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A platform killed outright leaves its idle sandboxes frozen (cgroup v1's freezer holds a
// frozen task's SIGKILL, the parent-death signal included, until it is thawed): they would run
// on for ever, holding their uids, which the dead platform's locks no longer protect (issue #29).
// So each platform holds a lock for its cgroup parent (faascope/<id>) while it lives, one byte
// of platformLockFile at the id's offset (an OFD lock, released by the kernel when the process
// dies), and a starting platform thaws, kills and removes the groups of every faascope/<id>
// whose lock nobody holds, before it hands out a uid.

// platformLockFile is where the platforms' locks are; /run is a tmpfs, so a reboot clears it.
var platformLockFile = "/run/faascope/platforms.lock"

// platformLockRange is the lock of one byte at the platform id's offset (12 hex digits), as
// identity.go's lockRange locks a uid's byte.
func platformLockRange(typ int16, id string) (*unix.Flock_t, error) {
	off, err := strconv.ParseUint(id, 16, 48)
	if err != nil {
		return nil, fmt.Errorf("platform id %q: %w", id, err)
	}
	return lockRange(typ, int(off)), nil
}

// lockPlatform opens the lock file and locks this platform's byte; the file is held open for
// the platform's life (closing it releases the lock).
func lockPlatform(id string) (*os.File, error) {
	f, err := openLockFile(platformLockFile)
	if err != nil {
		return nil, fmt.Errorf("platform lock: %w", err)
	}
	lk, err := platformLockRange(unix.F_WRLCK, id)
	if err == nil {
		err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, lk)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("platform lock for %s (another platform on the same data directory?): %w", id, err)
	}
	return f, nil
}

// platformAlive says whether another open file description holds id's lock.
func platformAlive(f *os.File, id string) bool {
	lk, err := platformLockRange(unix.F_WRLCK, id)
	if err != nil {
		return true // not a platform's id: leave it alone
	}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return true
	}
	return lk.Type != unix.F_UNLCK
}

// removeDeadPlatformsCgroups thaws, kills and removes the sandbox groups (and the v1 blkio group)
// of every platform whose lock is free (own, the caller's id, is skipped: cleanStale handles it).
func removeDeadPlatformsCgroups(lock *os.File, own string) {
	seen := map[string]bool{}
	roots := parentDirs("faascope")
	if CgroupVersion() == 1 && blkioV1Available() {
		// v1 blkio has one group per platform, none per sandbox (blkio.go): a platform killed
		// with no sandbox left is found only there.
		roots = append(roots, blkioV1Dir("faascope"))
	}
	for _, root := range roots {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			id := e.Name()
			if !e.IsDir() || id == own || seen[id] {
				continue
			}
			seen[id] = true
			if !platformAlive(lock, id) {
				RemoveStaleCgroups("faascope/" + id)
				RemoveParentCgroups("faascope/" + id)
				removePlatformBlkio("faascope/" + id)
			}
		}
	}
}
