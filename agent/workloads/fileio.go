package workloads

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

const (
	// MaxFileSize keeps requests within what any FaaS /tmp offers (Lambda: 10 GiB).
	MaxFileSize = 64 << 30
	// MaxIOSize bounds the single buffer the agent allocates; larger requests would only measure
	// the sandbox's memory limit.
	MaxIOSize = 1 << 30
	// logicalBlock is the alignment O_DIRECT needs for sizes and offsets on common block devices.
	logicalBlock = 512
	maxPath      = 4096 // PATH_MAX
	// DefaultPath is the file used when the request names none.
	DefaultPath = "faascope-fileio.dat"
)

// FileIO reads or writes one file in the function's temp directory (/tmp on Lambda, GCF and the
// local platform). See docs/agent.md for the semantics of every parameter.
type FileIO struct {
	Kind     string `json:"kind"`
	Engine   string `json:"engine"`
	Op       string `json:"op"`
	Pattern  string `json:"pattern"`
	FileSize int64  `json:"file_size"`
	IOSize   int64  `json:"io_size"`
	Direct   bool   `json:"direct"`
	Fsync    string `json:"fsync"`
	Source   string `json:"source"`
	Path     string `json:"path"`
	Prepare  *bool  `json:"prepare"`
	Drop     *bool  `json:"drop"`
	Seed     int64  `json:"seed"`

	// resolved is Path made absolute and confined to the temp directory by Validate.
	resolved string
	// Set by sharedfs: the directory paths are confined to ("" = the temp directory), and for
	// one file shared by many invocations, the offset of this invocation's region (the file
	// is then never truncated, laid out only in the region, nor deleted on error).
	dir    string
	dirFor string
	base   int64
	shared bool
}

// FileIOResult is the "workload" object of a fileio response.
type FileIOResult struct {
	Common
	Engine          string  `json:"engine"`
	Op              string  `json:"op"`
	Pattern         string  `json:"pattern"`
	FileSize        int64   `json:"file_size"`
	IOSize          int64   `json:"io_size"`
	DirectRequested bool    `json:"direct_requested"`
	DirectEffective bool    `json:"direct_effective"`
	Fsync           string  `json:"fsync"`
	Source          string  `json:"source"`
	Seed            int64   `json:"seed"`
	Path            string  `json:"path"`
	FSType          string  `json:"fs_type"`
	Prepared        bool    `json:"prepared"`
	Dropped         bool    `json:"dropped"`
	Throughput      float64 `json:"throughput_bytes_per_s"`
	// native engine only
	Latency *Latency `json:"latency,omitempty"`
	FsyncS  *float64 `json:"fsync_s,omitempty"`
	// dd engine only
	WallS     *float64 `json:"wall_s,omitempty"`
	DDCommand []string `json:"dd_command,omitempty"`
}

func (f *FileIO) Validate() error {
	if err := oneOf("workload.engine", &f.Engine, "native", "native", "dd"); err != nil {
		return err
	}
	if f.Op == "" {
		return Invalid("workload.op", "required (\"write\" or \"read\")")
	}
	if err := oneOf("workload.op", &f.Op, "", "write", "read"); err != nil {
		return err
	}
	if err := oneOf("workload.pattern", &f.Pattern, "sequential", "sequential", "random"); err != nil {
		return err
	}
	if err := oneOf("workload.fsync", &f.Fsync, "none", "none", "end", "every"); err != nil {
		return err
	}
	if err := oneOf("workload.source", &f.Source, "zero", "zero", "urandom"); err != nil {
		return err
	}
	if f.FileSize < 1 || f.FileSize > MaxFileSize {
		return Invalid("workload.file_size", "must be between 1 and %d bytes (got %d)", int64(MaxFileSize), f.FileSize)
	}
	if f.IOSize < 1 || f.IOSize > MaxIOSize {
		return Invalid("workload.io_size", "must be between 1 and %d bytes (got %d)", MaxIOSize, f.IOSize)
	}
	if f.IOSize > f.FileSize {
		return Invalid("workload.io_size", "must not exceed file_size (%d > %d)", f.IOSize, f.FileSize)
	}
	if f.Direct && f.IOSize%logicalBlock != 0 {
		return Invalid("workload.io_size", "must be a multiple of %d with direct=true (got %d)", logicalBlock, f.IOSize)
	}
	if f.Op == "read" && f.Fsync != "none" {
		return Invalid("workload.fsync", "only applies to op \"write\" (got %q with op \"read\")", f.Fsync)
	}
	if f.Engine == "dd" && f.Pattern != "sequential" {
		return Invalid("workload.pattern", "engine \"dd\" only does \"sequential\" (got %q)", f.Pattern)
	}
	if f.Prepare == nil {
		// Reads need a file; writes start from an empty one unless asked to overwrite in place.
		p := f.Op == "read"
		f.Prepare = &p
	}
	if f.Drop == nil {
		// A written file stays for a later read; a file the agent made just to read it goes.
		d := f.Op == "read" && *f.Prepare
		f.Drop = &d
	}
	if f.Path == "" {
		f.Path = DefaultPath
	}
	dir, what := os.TempDir(), "temp directory"
	if f.dir != "" {
		dir, what = f.dir, f.dirFor
	}
	resolved, err := confineIn(dir, what, f.Path)
	if err != nil {
		return err
	}
	f.resolved = resolved
	return nil
}

func oneOf(field string, v *string, def string, allowed ...string) error {
	if *v == "" && def != "" {
		*v = def
	}
	for _, a := range allowed {
		if *v == a {
			return nil
		}
	}
	return Invalid(field, "must be one of %q (got %q)", allowed, *v)
}

// confine maps a request's relative path into the temp directory. Requests come from whoever
// can invoke the function, so the file must never land outside it: absolute paths and ".." are
// rejected outright, and directories are resolved through symlinks and checked again. The final
// component is opened with O_NOFOLLOW, so a symlink planted there later cannot redirect I/O.
func confine(rel string) (string, error) {
	return confineIn(os.TempDir(), "temp directory", rel)
}

// confineIn is confine for another directory (what names it in messages).
func confineIn(dir, what, rel string) (string, error) {
	const field = "workload.path"
	if len(rel) > maxPath {
		return "", Invalid(field, "longer than %d bytes", maxPath)
	}
	if strings.ContainsRune(rel, 0) {
		return "", Invalid(field, "must not contain NUL")
	}
	if filepath.IsAbs(rel) {
		return "", Invalid(field, "must be relative to the temp directory (got %q)", rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", Invalid(field, "must not contain \"..\" (got %q)", rel)
		}
	}
	clean := filepath.Clean(rel)
	if clean == "." {
		return "", Invalid(field, "must name a file (got %q)", rel)
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", &Error{Type: IOError, Message: what + ": " + err.Error()}
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(filepath.Join(base, clean)))
	if err != nil {
		return "", Invalid(field, "directory of %q does not exist in the %s", rel, what)
	}
	if !within(base, parent) {
		return "", Invalid(field, "%q escapes the %s through a symbolic link", rel, what)
	}
	final := filepath.Join(parent, filepath.Base(clean))
	if fi, err := os.Lstat(final); err == nil {
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return "", Invalid(field, "%q is a symbolic link", rel)
		case !fi.Mode().IsRegular():
			return "", Invalid(field, "%q exists and is not a regular file", rel)
		}
	}
	return final, nil
}

func within(base, p string) bool {
	if p == base {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(base, "/")+"/")
}

func (f *FileIO) Run(ctx context.Context) (any, error) {
	if f.resolved == "" {
		if err := f.Validate(); err != nil {
			return nil, err
		}
	}
	if f.Engine == "dd" {
		return f.runDD(ctx)
	}
	return f.runNative()
}

func (f *FileIO) result() FileIOResult {
	return FileIOResult{
		Common:          Common{Kind: "fileio"},
		Engine:          f.Engine,
		Op:              f.Op,
		Pattern:         f.Pattern,
		FileSize:        f.FileSize,
		IOSize:          f.IOSize,
		DirectRequested: f.Direct,
		Fsync:           f.Fsync,
		Source:          f.Source,
		Seed:            f.Seed,
		Path:            f.resolved,
	}
}

func (r *FileIOResult) finish() {
	if r.ElapsedS > 0 {
		r.Throughput = float64(r.Bytes) / r.ElapsedS
	}
}
