package workloads

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The timed loop issues pread/pwrite as raw system calls, which do not tell the Go scheduler
// the thread is blocked. With ordinary calls, every I/O longer than ~20 µs has the scheduler's
// monitor thread take the processor away and the goroutine take it back afterwards; on the
// 2-vCPU development VM that added ~10 % to a 512 B O_DIRECT read (p50 92 µs vs 83 µs for raw
// calls and for fio). The cost of raw calls: this thread keeps its P while blocked, so with
// GOMAXPROCS=1 other goroutines (an HTTP request queuing behind the mutex) wait for the I/O to
// finish, and a garbage collection started meanwhile waits for it too. The agent runs one
// invocation at a time and allocates nothing in the loop, so neither matters here.

func rawPread(fd int, b []byte, off int64) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawPwrite(fd int, b []byte, off int64) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
