package workloads

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// tempDir points the agent's temp directory (TMPDIR) at a fresh directory. On this project's
// machines /tmp is on the root disk, which supports O_DIRECT; tests that need that check fs_type.
func tempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func bptr(b bool) *bool { return &b }

func run(t *testing.T, f *FileIO) (FileIOResult, error) {
	t.Helper()
	f.Kind = "fileio"
	if err := f.Validate(); err != nil {
		return FileIOResult{}, err
	}
	r, err := f.Run(context.Background())
	if err != nil {
		return FileIOResult{}, err
	}
	return r.(FileIOResult), nil
}

func mustRun(t *testing.T, f *FileIO) FileIOResult {
	t.Helper()
	r, err := run(t, f)
	if err != nil {
		t.Fatalf("%+v: %v", f, err)
	}
	return r
}

func diskBacked(r FileIOResult) bool { return r.FSType != "tmpfs" && r.FSType != "ramfs" }

func TestFileIOWriteThenRead(t *testing.T) {
	dir := tempDir(t)
	for _, pattern := range []string{"sequential", "random"} {
		for _, direct := range []bool{false, true} {
			w := mustRun(t, &FileIO{Op: "write", Pattern: pattern, FileSize: 1 << 20, IOSize: 64 << 10, Direct: direct, Fsync: "end", Source: "urandom"})
			if w.Bytes != 1<<20 || w.Ops != 16 || w.Dropped || w.Prepared {
				t.Fatalf("write %s direct=%v: %+v", pattern, direct, w)
			}
			if w.Latency == nil || w.Latency.Count != 16 || w.FsyncS == nil || w.Throughput <= 0 {
				t.Fatalf("write %s: latency %+v fsync %v", pattern, w.Latency, w.FsyncS)
			}
			if direct && diskBacked(w) && !w.DirectEffective {
				t.Errorf("direct write on %s not effective", w.FSType)
			}
			st, err := os.Stat(filepath.Join(dir, DefaultPath))
			if err != nil || st.Size() != 1<<20 {
				t.Fatalf("written file: %v %v", st, err)
			}
			r := mustRun(t, &FileIO{Op: "read", Pattern: pattern, FileSize: 1 << 20, IOSize: 64 << 10, Direct: direct, Prepare: bptr(false)})
			if r.Bytes != 1<<20 || r.Ops != 16 || r.Prepared || r.Dropped {
				t.Fatalf("read %s direct=%v: %+v", pattern, direct, r)
			}
		}
	}
}

func TestFileIOReadPreparesAndDrops(t *testing.T) {
	dir := tempDir(t)
	r := mustRun(t, &FileIO{Op: "read", FileSize: 300_000, IOSize: 4096, Path: "r.dat"})
	if !r.Prepared || !r.Dropped || r.Bytes != 300_000 || r.Ops != 74 {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.dat")); !os.IsNotExist(err) {
		t.Fatalf("prepared file not dropped: %v", err)
	}
}

func TestFileIOPartialLastBlock(t *testing.T) {
	dir := tempDir(t)
	// Buffered: exactly file_size bytes, the last operation short.
	w := mustRun(t, &FileIO{Op: "write", FileSize: 10_000, IOSize: 4096})
	if w.Bytes != 10_000 || w.Ops != 3 {
		t.Fatalf("buffered: %+v", w)
	}
	// Direct: whole blocks, rounded up like dd count=.
	w = mustRun(t, &FileIO{Op: "write", FileSize: 10_000, IOSize: 4096, Direct: true})
	if w.Bytes != 12288 || w.Ops != 3 {
		t.Fatalf("direct write: %+v", w)
	}
	// Direct read of a file that ends mid-block: the kernel's short read is accepted.
	r := mustRun(t, &FileIO{Op: "read", FileSize: 10_000, IOSize: 4096, Direct: true, Path: "odd.dat"})
	if r.Bytes != 10_000 || r.Ops != 3 {
		t.Fatalf("direct read: %+v", r)
	}
	// Random covers whole blocks only.
	r = mustRun(t, &FileIO{Op: "read", Pattern: "random", FileSize: 10_000, IOSize: 4096, Seed: 7})
	if r.Bytes != 8192 || r.Ops != 2 {
		t.Fatalf("random read: %+v", r)
	}
	_ = dir
}

func TestFileIOReadMissingOrShortFile(t *testing.T) {
	dir := tempDir(t)
	_, err := run(t, &FileIO{Op: "read", FileSize: 4096, IOSize: 4096, Prepare: bptr(false), Path: "absent"})
	if e := AsError(err); e.Type != IOError || !strings.Contains(e.Message, "open") {
		t.Fatalf("missing file: %v", err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = run(t, &FileIO{Op: "read", FileSize: 4096, IOSize: 512, Prepare: bptr(false), Path: "short"})
	if e := AsError(err); e.Type != IOError || !strings.Contains(e.Message, "shorter") {
		t.Fatalf("short file: %v", err)
	}
	if _, err := os.Stat(short); !os.IsNotExist(err) {
		t.Errorf("file not removed after an error: %v", err)
	}
}

func TestFileIOValidation(t *testing.T) {
	tempDir(t)
	cases := []struct {
		f     FileIO
		field string
	}{
		{FileIO{FileSize: 1, IOSize: 1}, "workload.op"},
		{FileIO{Op: "append", FileSize: 1, IOSize: 1}, "workload.op"},
		{FileIO{Op: "write", Engine: "aio", FileSize: 1, IOSize: 1}, "workload.engine"},
		{FileIO{Op: "write", Pattern: "strided", FileSize: 1, IOSize: 1}, "workload.pattern"},
		{FileIO{Op: "write", Fsync: "sometimes", FileSize: 1, IOSize: 1}, "workload.fsync"},
		{FileIO{Op: "write", Source: "pi", FileSize: 1, IOSize: 1}, "workload.source"},
		{FileIO{Op: "write", FileSize: 0, IOSize: 1}, "workload.file_size"},
		{FileIO{Op: "write", FileSize: MaxFileSize + 1, IOSize: 1}, "workload.file_size"},
		{FileIO{Op: "write", FileSize: 1024, IOSize: 0}, "workload.io_size"},
		{FileIO{Op: "write", FileSize: 512, IOSize: 1024}, "workload.io_size"},
		{FileIO{Op: "write", FileSize: 4096, IOSize: 1000, Direct: true}, "workload.io_size"},
		{FileIO{Op: "read", FileSize: 4096, IOSize: 512, Fsync: "end"}, "workload.fsync"},
		{FileIO{Op: "write", Engine: "dd", Pattern: "random", FileSize: 4096, IOSize: 512}, "workload.pattern"},
	}
	for _, c := range cases {
		f := c.f
		f.Kind = "fileio"
		err := f.Validate()
		var e *Error
		if !errors.As(err, &e) || e.Type != InvalidRequest || !strings.HasPrefix(e.Message, c.field+": ") {
			t.Errorf("%+v: got %v, want InvalidRequest on %s", c.f, err, c.field)
		}
	}
	err := (&FileIO{Op: "write", FileSize: 1024, IOSize: 2048}).Validate()
	if err.Error() != "InvalidRequest: workload.io_size: must not exceed file_size (2048 > 1024)" {
		t.Errorf("message: %v", err)
	}
}

func TestFileIOPathConfinement(t *testing.T) {
	dir := tempDir(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "link.dat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "sub")
	if err := os.Symlink(inside, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../x", "a/../../x", "..", "/etc/passwd", dir + "/x", "escape/f", "link.dat", ".", "sub", "nodir/x", "a\x00b"} {
		err := (&FileIO{Op: "write", FileSize: 1, IOSize: 1, Path: p}).Validate()
		if e := AsError(err); err == nil || e.Type != InvalidRequest || !strings.HasPrefix(e.Message, "workload.path: ") {
			t.Errorf("path %q: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); !os.IsNotExist(err) {
		t.Fatalf("a file appeared outside the temp directory: %v", err)
	}
	for p, want := range map[string]string{
		"x.dat":       filepath.Join(dir, "x.dat"),
		"./sub/x.dat": filepath.Join(inside, "x.dat"),
		"alias/y.dat": filepath.Join(inside, "y.dat"), // a symlink that stays inside is fine
		"sub//z.dat/": filepath.Join(inside, "z.dat"),
	} {
		f := &FileIO{Op: "write", FileSize: 1, IOSize: 1, Path: p}
		if err := f.Validate(); err != nil {
			t.Errorf("path %q: %v", p, err)
			continue
		}
		if real, _ := filepath.EvalSymlinks(filepath.Dir(want)); f.resolved != filepath.Join(real, filepath.Base(want)) {
			t.Errorf("path %q resolved to %s, want %s", p, f.resolved, want)
		}
	}
}

func TestDDParity(t *testing.T) {
	if _, err := exec.LookPath("dd"); err != nil {
		t.Skip("no dd on this machine")
	}
	tempDir(t)
	for _, direct := range []bool{false, true} {
		for _, fsync := range []string{"none", "end", "every"} {
			size, io := int64(1<<20), int64(128<<10)
			if fsync == "every" {
				size = 256 << 10
			}
			n := mustRun(t, &FileIO{Op: "write", Engine: "native", FileSize: size, IOSize: io, Direct: direct, Fsync: fsync, Path: "n.dat"})
			d := mustRun(t, &FileIO{Op: "write", Engine: "dd", FileSize: size, IOSize: io, Direct: direct, Fsync: fsync, Path: "d.dat"})
			if n.Bytes != d.Bytes || n.Ops != d.Ops || n.DirectEffective != d.DirectEffective {
				t.Errorf("write direct=%v fsync=%s: native %d B/%d ops/%v, dd %d B/%d ops/%v", direct, fsync, n.Bytes, n.Ops, n.DirectEffective, d.Bytes, d.Ops, d.DirectEffective)
			}
			if d.WallS == nil || *d.WallS < d.ElapsedS || len(d.DDCommand) < 5 {
				t.Errorf("dd result %+v", d)
			}
		}
		n := mustRun(t, &FileIO{Op: "read", Engine: "native", FileSize: 1 << 20, IOSize: 128 << 10, Direct: direct, Path: "r.dat"})
		d := mustRun(t, &FileIO{Op: "read", Engine: "dd", FileSize: 1 << 20, IOSize: 128 << 10, Direct: direct, Path: "r.dat"})
		if n.Bytes != d.Bytes || n.Ops != d.Ops {
			t.Errorf("read direct=%v: native %d B/%d ops, dd %d B/%d ops", direct, n.Bytes, n.Ops, d.Bytes, d.Ops)
		}
	}
	// A size that is not a multiple of io_size: both engines write whole blocks when direct.
	n := mustRun(t, &FileIO{Op: "write", FileSize: 10_000, IOSize: 512, Direct: true, Path: "n.dat"})
	d := mustRun(t, &FileIO{Op: "write", Engine: "dd", FileSize: 10_000, IOSize: 512, Direct: true, Source: "urandom", Path: "d.dat"})
	if n.Bytes != 10240 || d.Bytes != 10240 {
		t.Errorf("rounded-up write: native %d, dd %d bytes", n.Bytes, d.Bytes)
	}
	want := []string{"if=/dev/urandom", "bs=512", "count=20"}
	for _, w := range want {
		if !strings.Contains(strings.Join(d.DDCommand, " "), w) {
			t.Errorf("dd command %q lacks %s", d.DDCommand, w)
		}
	}
}

func TestParseDDSummary(t *testing.T) {
	for out, want := range map[string]struct {
		b int64
		s float64
	}{
		"8+0 records in\n8+0 records out\n1048576 bytes (1.0 MB, 1.0 MiB) copied, 0.00123 s, 852 MB/s\n": {1048576, 0.00123},
		"1+0 records in\n1+0 records out\n512 bytes copied, 4.1e-05 s, 12.5 MB/s\n":                      {512, 4.1e-05},
		"0+0 records in\n0+0 records out\n0 bytes copied, 2e-06 s, 0 B/s\n":                              {0, 2e-06},
		"1+0 records in\n1+0 records out\n1 byte copied, 3.2e-05 s, 31.2 kB/s\n":                         {1, 3.2e-05},
		"8+0 records in\n8+0 records out\n1048576 bytes (1.0MB) copied, 0.002139 seconds, 467.5MB/s\n":   {1048576, 0.002139},
	} {
		b, s, ok := parseDDSummary(out)
		if !ok || b != want.b || s != want.s {
			t.Errorf("%q: %d %g %v", out, b, s, ok)
		}
	}
	if _, _, ok := parseDDSummary("dd: failed to open 'x': No such file or directory\n"); ok {
		t.Error("parsed an error as a summary")
	}
	if got := parseDDRecords("3+1 records in\n3+1 records out\n", true, 9); got != 4 {
		t.Errorf("records: %d", got)
	}
}

// mountTmpfs mounts a small tmpfs, so the in-memory case (GCF's /tmp) and ENOSPC can be tested.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount tmpfs here (%v)", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	t.Setenv("TMPDIR", dir)
	return dir
}

func TestFileIOTmpfsDirectIsNotEffective(t *testing.T) {
	mountTmpfs(t, "16m")
	for _, engine := range []string{"native", "dd"} {
		for _, op := range []string{"write", "read"} {
			r := mustRun(t, &FileIO{Op: op, Engine: engine, FileSize: 1 << 20, IOSize: 64 << 10, Direct: true})
			if r.FSType != "tmpfs" || !r.DirectRequested || r.DirectEffective || r.Bytes != 1<<20 {
				t.Errorf("%s %s on tmpfs: fs %s requested %v effective %v bytes %d", engine, op, r.FSType, r.DirectRequested, r.DirectEffective, r.Bytes)
			}
		}
	}
}

func TestFileIONoSpace(t *testing.T) {
	dir := mountTmpfs(t, "1m")
	for _, engine := range []string{"native", "dd"} {
		_, err := run(t, &FileIO{Op: "write", Engine: engine, FileSize: 4 << 20, IOSize: 64 << 10})
		if e := AsError(err); e.Type != NoSpace {
			t.Errorf("%s: %v", engine, err)
		}
		if _, err := os.Stat(filepath.Join(dir, DefaultPath)); !os.IsNotExist(err) {
			t.Errorf("%s: file left behind after ENOSPC: %v", engine, err)
		}
	}
}
