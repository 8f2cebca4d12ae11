package platform

import (
	"context"
	"fmt"
	"log"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/time/rate"
)

// The shared file system is served by the platform itself, in user space (FUSE), the way EFS is
// served to Lambda by an NFS server: every read and write a sandbox makes there is a request to
// the platform, which meters it against the file system's one budget before doing it on the
// directory underneath. Nothing reaches the data without passing the meter, whatever the write
// mode: FUSE without a writeback cache (go-fuse never asks for one) sends each write(2) to the
// server before it returns, so buffered writes, writes followed by fsync, O_SYNC and O_DIRECT
// writes all pay the budget inside the call that wrote; reads pay it too, because a file opened
// again has its cached pages dropped (no FOPEN_KEEP_CACHE: NFS's close-to-open consistency), so
// every open reads from the server.
//
// A block-device throttle cannot do this on cgroup v1 (measured: a 16 MiB buffered write
// with fsync on the former throttled ext4 loop device ran at 177 MB/s against a 104.9 MB/s
// budget, a 4 MiB one at 900 MB/s): blk-throttle charges a bio to the cgroup that issues it,
// and buffered writes are written back by kernel flusher threads in the root cgroup (cgroup v1
// has no writeback attribution), and the page cache served re-reads without any I/O at all.
//
// The meter is EFS's own ("Amazon EFS performance", throughput modes): one budget of metered
// throughput for all clients, writes metered at their size and reads at read_bps/write_bps of
// it (one third on Bursting: 100 MiB/s of writes, or 300 MiB/s of reads, or a mix), and
// separate read and write operation rates. Requests are at most 1 MiB, EFS's recommended NFS
// rsize and wsize (Amazon EFS User Guide, "Mounting on Amazon EC2 Linux instances using the NFS
// client": rsize=1048576,wsize=1048576).

// sharedIOSize is the largest read or write request, NFS's rsize/wsize on EFS.
const sharedIOSize = 1 << 20

// sharedBucketSpan is how much of the budget the meter lets pass at once, as time at the
// budget's rate: short, so a request of sharedIOSize pays for all but 1 ms of itself and a
// single small file cannot outrun the budget on an idle meter.
const sharedBucketSpan = time.Millisecond

// efsMeter is the shared file system's budget: one limiter of metered bytes, and one of
// operations per direction. A request reserves its share and sleeps until the reservation is
// due (rate.Limiter's reservations, which run into debt instead of losing what a late waker
// did not take: with a 1 ms bucket, waking up late would otherwise cost a loaded host a third
// of the budget, measured).
type efsMeter struct {
	bytes              *rate.Limiter
	readNum, readDen   int64 // a read of n bytes is metered as n·readNum/readDen
	writeNum, writeDen int64
	readOps, writeOps  *rate.Limiter
}

// newEFSMeter makes the meter for a budget. The metered unit is a written byte when the budget
// limits writes (reads then cost write_bps/read_bps of a byte each), else a read byte.
func newEFSMeter(b BlockIO) *efsMeter {
	m := &efsMeter{readOps: opsLimiter(b.ReadIOPS), writeOps: opsLimiter(b.WriteIOPS)}
	bps := b.WriteBps
	switch {
	case b.WriteBps > 0:
		m.writeNum, m.writeDen = 1, 1
		if b.ReadBps > 0 {
			m.readNum, m.readDen = b.WriteBps, b.ReadBps
		}
	case b.ReadBps > 0:
		bps = b.ReadBps
		m.readNum, m.readDen = 1, 1
	}
	if bps > 0 {
		m.bytes = newRateLimiter(bps, max(bps*int64(sharedBucketSpan)/int64(time.Second), 1))
	}
	return m
}

// opsLimiter lets iops operations a second through, 10 ms' worth at once (nil: unlimited).
func opsLimiter(iops int64) *rate.Limiter {
	if iops <= 0 {
		return nil
	}
	return newRateLimiter(iops, max(iops/100, 1))
}

// newRateLimiter is a limiter of perSecond tokens a second holding at most burst, full.
func newRateLimiter(perSecond, burst int64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSecond), int(burst))
}

// take blocks until n tokens of l are due (n may exceed the burst: it is reserved in parts,
// back to back, and the wait is the last part's).
func take(l *rate.Limiter, n int64) {
	if l == nil || n <= 0 {
		return
	}
	now := time.Now()
	burst := int64(l.Burst())
	var last *rate.Reservation
	for n > 0 {
		part := min(n, burst)
		last = l.ReserveN(now, int(part))
		n -= part
	}
	if d := last.DelayFrom(now); d > 0 {
		time.Sleep(d)
	}
}

// read blocks until a read of n bytes is within the budget.
func (m *efsMeter) read(n int) {
	take(m.readOps, 1)
	if m.readDen > 0 {
		take(m.bytes, (int64(n)*m.readNum+m.readDen-1)/m.readDen)
	}
}

// write blocks until a write of n bytes is within the budget.
func (m *efsMeter) write(n int) {
	take(m.writeOps, 1)
	if m.writeDen > 0 {
		take(m.bytes, (int64(n)*m.writeNum+m.writeDen-1)/m.writeDen)
	}
}

// sharedFS is the shared directory served through the meter, mounted over the directory itself.
type sharedFS struct {
	dir    string
	under  *os.File // the directory below the mount, where the data lives
	server *fuse.Server
}

// mountSharedFS mounts the metered file system over dir, serving dir's own content (reached
// through a descriptor opened before the mount covers it). The mount is idmappable
// (default_permissions: the kernel checks permissions, with the sandboxes' idmapped ids), so
// sandboxes bind it as they bind a plain directory (sandboxinit.go, mountShared).
func mountSharedFS(dir string, budget BlockIO) (*sharedFS, error) {
	unmountStale(dir)
	under, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(under.Fd()), &st); err != nil {
		under.Close()
		return nil, err
	}
	meter := newEFSMeter(budget)
	root := &fs.LoopbackRoot{Path: fmt.Sprintf("/proc/self/fd/%d", under.Fd()), Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &meteredNode{LoopbackNode: fs.LoopbackNode{RootData: r}, meter: meter}
	}
	root.RootNode = root.NewNode(root, nil, "", nil)
	// One second of attribute and name caching, as NFS's minimum (acregmin is 3 s): sandboxes
	// see each other's new files and sizes within it.
	second := time.Second
	opts := &fs.Options{EntryTimeout: &second, AttrTimeout: &second, NegativeTimeout: &second,
		MountOptions: fuse.MountOptions{
			AllowOther: true, DirectMountStrict: true, IDMappedMount: true,
			FsName: "faascope-shared", Name: "faascope",
			MaxWrite: sharedIOSize, MaxReadAhead: sharedIOSize, MaxBackground: 64,
			// The meter must see every byte: no passthrough to the backing file, no
			// writeback cache that would let close(2) return before the data was written.
			DisabledCapabilities: fuse.CAP_PASSTHROUGH | fuse.CAP_WRITEBACK_CACHE,
		}}
	server, err := fs.Mount(dir, root.RootNode, opts)
	if err != nil {
		under.Close()
		return nil, fmt.Errorf("mount the shared file system (FUSE) on %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o1777|os.ModeSticky); err != nil {
		server.Unmount()
		under.Close()
		return nil, err
	}
	return &sharedFS{dir: dir, under: under, server: server}, nil
}

// close unmounts the file system (lazily if something still holds it) and stops serving it.
// go-fuse's Unmount waits until the kernel ends the connection, which is when the last copy of
// the mount goes: a mount namespace cloned from the host's while it was mounted (another
// platform's sandbox being made) holds one. The wait is bounded; past it the server goes on
// answering those copies until this process exits.
func (s *sharedFS) close() {
	done := make(chan error, 1)
	go func() { done <- s.server.Unmount() }()
	select {
	case err := <-done:
		if err != nil {
			syscall.Unmount(s.dir, syscall.MNT_DETACH)
		}
		s.under.Close()
	case <-time.After(10 * time.Second):
		log.Printf("shared file system: %s still held by another mount namespace after 10 s; unmounted here", s.dir)
	}
}

// meteredNode is a loopback node whose open files are metered.
type meteredNode struct {
	fs.LoopbackNode
	meter *efsMeter
}

var _ = (fs.NodeOpener)((*meteredNode)(nil))
var _ = (fs.NodeCreater)((*meteredNode)(nil))

func (n *meteredNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, fl, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &meteredFile{f: fh.(*fs.LoopbackFile), meter: n.meter}, fl, 0
}

func (n *meteredNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	ch, fh, fl, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return ch, &meteredFile{f: fh.(*fs.LoopbackFile), meter: n.meter}, fl, 0
}

// meteredFile is an open file of the shared file system: reads and writes pay the meter first.
// It deliberately has no PassthroughFd (the kernel would then bypass the server) and no
// copy_file_range (the kernel falls back to reads and writes, which pay).
type meteredFile struct {
	f     *fs.LoopbackFile
	meter *efsMeter
}

var _ = (fs.FileReader)((*meteredFile)(nil))
var _ = (fs.FileWriter)((*meteredFile)(nil))
var _ = (fs.FileFlusher)((*meteredFile)(nil))
var _ = (fs.FileFsyncer)((*meteredFile)(nil))
var _ = (fs.FileReleaser)((*meteredFile)(nil))
var _ = (fs.FileGetattrer)((*meteredFile)(nil))
var _ = (fs.FileSetattrer)((*meteredFile)(nil))
var _ = (fs.FileLseeker)((*meteredFile)(nil))
var _ = (fs.FileAllocater)((*meteredFile)(nil))
var _ = (fs.FileGetlker)((*meteredFile)(nil))
var _ = (fs.FileSetlker)((*meteredFile)(nil))
var _ = (fs.FileSetlkwer)((*meteredFile)(nil))

func (m *meteredFile) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	m.meter.read(len(buf))
	return m.f.Read(ctx, buf, off)
}

func (m *meteredFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	m.meter.write(len(data))
	return m.f.Write(ctx, data, off)
}

func (m *meteredFile) Flush(ctx context.Context) syscall.Errno { return m.f.Flush(ctx) }
func (m *meteredFile) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return m.f.Fsync(ctx, flags)
}
func (m *meteredFile) Release(ctx context.Context) syscall.Errno { return m.f.Release(ctx) }
func (m *meteredFile) Getattr(ctx context.Context, a *fuse.AttrOut) syscall.Errno {
	return m.f.Getattr(ctx, a)
}
func (m *meteredFile) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return m.f.Setattr(ctx, in, out)
}
func (m *meteredFile) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return m.f.Lseek(ctx, off, whence)
}
func (m *meteredFile) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	return m.f.Allocate(ctx, off, size, mode)
}
func (m *meteredFile) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	return m.f.Getlk(ctx, owner, lk, flags, out)
}
func (m *meteredFile) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return m.f.Setlk(ctx, owner, lk, flags)
}
func (m *meteredFile) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return m.f.Setlkw(ctx, owner, lk, flags)
}
