package workloads

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// runNative does the I/O with pread/pwrite on one descriptor, timing every operation.
//
// Sizes: sequential runs do ceil(file_size/io_size) operations. Buffered, the last one moves the
// remainder, so exactly file_size bytes move. With direct=true a partial transfer cannot be
// direct, so writes round up to whole io_size blocks (ceil(file_size/io_size)·io_size bytes, as
// dd with count= does) and reads ask for a whole block at the end and accept the kernel's short
// read at end of file. Random runs do floor(file_size/io_size) operations of io_size bytes at
// io_size-aligned offsets, each block once, in an order fixed by seed.
func (f *FileIO) runNative() (_ any, err error) {
	res := f.result()
	defer func() {
		if err != nil && !f.shared {
			_ = os.Remove(f.resolved)
		}
	}()
	if *f.Prepare {
		if err := layOutAt(f.resolved, f.base, f.FileSize, f.Source, f.shared); err != nil {
			return nil, err
		}
		res.Prepared = true
	}

	write := f.Op == "write"
	flags := unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_RDONLY
	if write {
		flags = unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_WRONLY | unix.O_CREAT
		if !res.Prepared && !f.shared {
			flags |= unix.O_TRUNC
		}
	}
	fd, direct, err := openFile(f.resolved, flags, f.Direct)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	fsName, inMemory := fsType(fd)
	res.FSType = fsName

	var ops int64
	var perm *permutation
	if f.Pattern == "random" {
		ops = f.FileSize / f.IOSize
		p := newPermutation(uint64(ops), f.Seed)
		perm = &p
	} else {
		ops = (f.FileSize + f.IOSize - 1) / f.IOSize
	}
	if !write {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, ioFailure("stat", -1, err)
		}
		need := f.base + f.FileSize
		if perm != nil {
			need = f.base + ops*f.IOSize
		}
		if st.Size < need {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf(
				"read: %s is %d bytes, shorter than the %d bytes to read (use prepare=true)", f.resolved, st.Size, need)}
		}
	}

	buf, free, err := alignedBuffer(f.IOSize)
	if err != nil {
		return nil, err
	}
	defer free()
	if write && f.Source == "urandom" {
		// Filled once, before the clock starts: generating data is not the I/O being measured.
		if _, err := rand.Read(buf); err != nil {
			return nil, &Error{Type: Internal, Message: "filling the buffer from crypto/rand: " + err.Error()}
		}
	}

	h := newHistogram()
	var fsyncTime time.Duration
	var moved int64
	start := time.Now()
	t0 := start
	for i := int64(0); i < ops; i++ {
		off := i * f.IOSize
		if perm != nil {
			off = int64(perm.at(uint64(i))) * f.IOSize
		}
		size := f.IOSize
		last := perm == nil && i == ops-1
		if rem := f.FileSize - off; last && rem < size && !f.Direct {
			size = rem
		}
		off += f.base
		var n int64
		var err error
		for {
			if write {
				n, err = pwriteFull(fd, buf[:size], off)
			} else {
				n, err = preadFull(fd, buf[:size], off)
			}
			// Some file systems accept O_DIRECT at open and refuse it on the first transfer
			// (e.g. a 512 B I/O on a 4 KiB-sector device): fall back and say so, like at open.
			if direct && i == 0 && errors.Is(err, unix.EINVAL) {
				if ferr := clearDirect(fd); ferr == nil {
					direct = false
					start = time.Now()
					t0 = start
					continue
				}
			}
			break
		}
		if err != nil {
			return nil, ioFailure(f.Op, off, err)
		}
		if !write && n < size && !(last && f.Direct && n >= f.base+f.FileSize-off) {
			return nil, &Error{Type: IOError, Message: fmt.Sprintf("read at offset %d: file ended after %d of %d bytes", off, n, size)}
		}
		moved += n
		if write && f.Fsync == "every" {
			s := time.Now()
			if err := unix.Fsync(fd); err != nil {
				return nil, ioFailure("fsync", off, err)
			}
			fsyncTime += time.Since(s)
		}
		t1 := time.Now()
		h.record(t1.Sub(t0))
		t0 = t1
	}
	if write && f.Fsync == "end" {
		s := time.Now()
		if err := unix.Fsync(fd); err != nil {
			return nil, ioFailure("fsync", -1, err)
		}
		fsyncTime += time.Since(s)
	}
	elapsed := time.Since(start)

	res.ElapsedS = elapsed.Seconds()
	res.Bytes = moved
	res.Ops = ops
	res.DirectEffective = direct && !inMemory
	res.Latency = h.summary()
	fs := fsyncTime.Seconds()
	res.FsyncS = &fs
	if *f.Drop {
		if err := os.Remove(f.resolved); err != nil {
			return nil, ioFailure("remove", -1, err)
		}
		res.Dropped = true
	}
	res.finish()
	return res, nil
}

// openFile opens with O_DIRECT when asked; file systems that refuse it (tmpfs before Linux 6.6)
// get a buffered descriptor and the caller reports direct_effective=false instead of failing.
func openFile(path string, flags int, direct bool) (int, bool, error) {
	if direct {
		fd, err := unix.Open(path, flags|unix.O_DIRECT, 0o644)
		if err == nil {
			return fd, true, nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return -1, false, ioFailure("open "+path, -1, err)
		}
	}
	fd, err := unix.Open(path, flags, 0o644)
	if err != nil {
		return -1, false, ioFailure("open "+path, -1, err)
	}
	return fd, false, nil
}

func clearDirect(fd int) error {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_DIRECT)
	return err
}

func pwriteFull(fd int, b []byte, off int64) (int64, error) {
	var done int64
	for len(b) > 0 {
		n, err := rawPwrite(fd, b, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.ErrShortWrite
		}
		b, off, done = b[n:], off+int64(n), done+int64(n)
	}
	return done, nil
}

// preadFull reads until b is full or the file ends; a short count means end of file.
func preadFull(fd int, b []byte, off int64) (int64, error) {
	var done int64
	for len(b) > 0 {
		n, err := rawPread(fd, b, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			break
		}
		b, off, done = b[n:], off+int64(n), done+int64(n)
	}
	return done, nil
}

// layOut creates the file a read (or an in-place write) works on, outside the timed region.
// It ends with fsync and FADV_DONTNEED so that a buffered read starts from the device rather
// than from the page cache this step just filled (a no-op on tmpfs, where memory is the device).
func layOut(path string, size int64, source string) error {
	return layOutAt(path, 0, size, source, false)
}

// layOutAt writes the region [base, base+size) of the file; shared leaves the rest of the file
// (other invocations' regions) alone instead of truncating it.
func layOutAt(path string, base, size int64, source string, shared bool) error {
	flags := unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_WRONLY | unix.O_CREAT
	if !shared {
		flags |= unix.O_TRUNC
	}
	fd, err := unix.Open(path, flags, 0o644)
	if err != nil {
		return ioFailure("prepare: open "+path, -1, err)
	}
	defer unix.Close(fd)
	chunk := make([]byte, min(size, 1<<20))
	if source == "urandom" {
		if _, err := rand.Read(chunk); err != nil {
			return &Error{Type: Internal, Message: "prepare: crypto/rand: " + err.Error()}
		}
	}
	for off := int64(0); off < size; {
		n := min(int64(len(chunk)), size-off)
		if _, err := pwriteFull(fd, chunk[:n], base+off); err != nil {
			return ioFailure("prepare: write", off, err)
		}
		off += n
	}
	if err := unix.Fsync(fd); err != nil {
		return ioFailure("prepare: fsync", -1, err)
	}
	_ = unix.Fadvise(fd, base, size, unix.FADV_DONTNEED)
	return nil
}
