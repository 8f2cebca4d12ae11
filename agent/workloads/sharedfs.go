package workloads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	// DefaultSharedRoot is where the local platform mounts its --shared-dir; on Lambda an EFS
	// access point is mounted where the function's FileSystemConfigs say (under /mnt/).
	DefaultSharedRoot = "/mnt/shared"
	// DefaultSharedPath is the file used when the request names none.
	DefaultSharedPath = "faascope-sharedfs.dat"
)

// SharedFS is fileio on a file system shared by all instances (EFS on Lambda, the platform's
// --shared-dir locally), with two ways for concurrent invocations to meet:
//   - mode "private": invocation index uses its own file, {path}.{index};
//   - mode "shared": every invocation uses one file, {path}, and works on its own region of
//     file_size bytes at offset index·file_size (many writers, one file: EFS's hard case).
//
// Paths are confined to the root exactly as fileio confines them to /tmp.
type SharedFS struct {
	Kind  string `json:"kind"`
	Root  string `json:"root"`
	Mode  string `json:"mode"`
	Index int64  `json:"index"`
	// fileio's parameters, declared once: encoding/json (and the request decoder's field list,
	// runtime.jsonFieldTypes) promote them to the top level, where the "kind" above wins over
	// FileIO's, so the request is the same flat object. Only the exported parameters are read
	// from it; Validate builds the FileIO that runs.
	FileIO

	f *FileIO
}

// SharedFSResult is fileio's result plus where the invocation worked.
type SharedFSResult struct {
	FileIOResult
	Root         string `json:"root"`
	Mode         string `json:"mode"`
	Index        int64  `json:"index"`
	RegionOffset int64  `json:"region_offset"`
}

// sharedRoot picks and checks the root: the request's (absolute, under /mnt/ as Lambda requires
// of EFS mount paths, or exactly $FAASCOPE_SHARED_DIR), else $FAASCOPE_SHARED_DIR, else
// /mnt/shared. Allowing any directory would let a request read and write anywhere the function
// can.
func sharedRoot(root string) (string, error) {
	const field = "workload.root"
	env := os.Getenv("FAASCOPE_SHARED_DIR")
	if root == "" {
		root = env
	}
	if root == "" {
		root = DefaultSharedRoot
	}
	if !filepath.IsAbs(root) || strings.ContainsRune(root, 0) {
		return "", Invalid(field, "must be an absolute path (got %q)", root)
	}
	clean := filepath.Clean(root)
	if clean != filepath.Clean(env) && !strings.HasPrefix(clean, "/mnt/") {
		return "", Invalid(field, "must be under /mnt/ (Lambda's EFS mount paths) or equal $FAASCOPE_SHARED_DIR (got %q)", root)
	}
	fi, err := os.Stat(clean)
	if err != nil || !fi.IsDir() {
		return "", Invalid(field, "%q is not a directory here (is the shared file system mounted?)", root)
	}
	return clean, nil
}

func (s *SharedFS) Validate() error {
	if err := oneOf("workload.mode", &s.Mode, "private", "private", "shared"); err != nil {
		return err
	}
	if s.Index < 0 || s.Index > 1<<20 {
		return Invalid("workload.index", "must be between 0 and %d (got %d)", 1<<20, s.Index)
	}
	root, err := sharedRoot(s.Root)
	if err != nil {
		return err
	}
	s.Root = root
	if s.Path == "" {
		s.Path = DefaultSharedPath
	}
	path := s.Path
	if s.Mode == "private" {
		path = fmt.Sprintf("%s.%d", s.Path, s.Index)
	}
	f := &FileIO{Kind: "fileio", Engine: s.Engine, Op: s.Op, Pattern: s.Pattern, FileSize: s.FileSize, IOSize: s.IOSize,
		Direct: s.Direct, Fsync: s.Fsync, Source: s.Source, Path: path, Prepare: s.Prepare, Drop: s.Drop, Seed: s.Seed,
		dir: root, dirFor: "shared directory"}
	if s.Mode == "shared" {
		if s.Engine == "dd" {
			return Invalid("workload.engine", "\"dd\" only with mode \"private\" (it cannot write at an invocation's offset)")
		}
		if s.Drop != nil && *s.Drop {
			return Invalid("workload.drop", "must be false with mode \"shared\": the file is everyone's")
		}
		no := false
		f.Drop = &no
		f.shared = true
		f.base = s.Index * s.FileSize
	}
	if err := f.Validate(); err != nil {
		return err
	}
	if f.shared && f.Direct && f.base%logicalBlock != 0 {
		return Invalid("workload.file_size", "must be a multiple of %d with direct=true and mode \"shared\" (regions start at index·file_size)", logicalBlock)
	}
	s.Engine, s.Op, s.Pattern, s.Fsync, s.Source, s.Prepare, s.Drop = f.Engine, f.Op, f.Pattern, f.Fsync, f.Source, f.Prepare, f.Drop
	s.f = f
	return nil
}

func (s *SharedFS) Run(ctx context.Context) (any, error) {
	if s.f == nil {
		if err := s.Validate(); err != nil {
			return nil, err
		}
	}
	out, err := s.f.Run(ctx)
	if err != nil {
		return nil, err
	}
	r := out.(FileIOResult)
	r.Kind = "sharedfs"
	return SharedFSResult{FileIOResult: r, Root: s.Root, Mode: s.Mode, Index: s.Index, RegionOffset: s.f.base}, nil
}
