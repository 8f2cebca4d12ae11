package workloads

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// App is an application-shaped workload: read an input from a storage, compute on it, write an
// output, timed separately (read_s, compute_s, write_s), after the three applications of the
// S3-vs-EFS study (Basu Roy, Patel and Tiwari, "Characterizing and Mitigating the I/O
// Scalability Challenges for Serverless Applications", IISWC 2021):
//   - "video": a large input read sequentially, light per-byte work (a luminance histogram and
//     a frame-difference score per 1 MiB "frame"), a small output;
//   - "sort": MapReduce's sort step: 100-byte records with 10-byte random keys, sorted by key,
//     written back (output = input size);
//   - "inference": a small model (float32 weights) applied to an input vector layer after
//     layer (matrix-vector products), a tiny output.
//
// The input is {prefix}app/{shape}/{index}/input and the output .../output in the storage
// ("object": S3; "kv": Redis or DynamoDB; "sharedfs": the shared root; "tmp": /tmp). With
// prepare (default true) the input is written first, outside the timed region, from a
// generator seeded by seed, so every run computes on the same data.
type App struct {
	Kind         string `json:"kind"`
	Shape        string `json:"shape"`
	Storage      string `json:"storage"`
	InputSize    int64  `json:"-"`
	InputSizeIn  *int64 `json:"input_size"`
	OutputSize   int64  `json:"-"`
	OutputSizeIn *int64 `json:"output_size"`
	Layers       int    `json:"-"`
	LayersIn     *int   `json:"layers"`
	Index        int64  `json:"index"`
	Seed         int64  `json:"seed"`
	Prepare      *bool  `json:"prepare"`
	Drop         *bool  `json:"drop"`
	// storage parameters (as in object, kv and sharedfs)
	Root string `json:"root"`
	BlobParams

	store blobStore
	where string
}

// BlobParams name the object or key-value store that app and transfer read and write through
// (the same meaning as in object and kv).
type BlobParams struct {
	Backend   string `json:"backend"`
	Endpoint  string `json:"endpoint"`
	Bucket    string `json:"bucket"`
	Table     string `json:"table"`
	Prefix    string `json:"prefix"`
	PathStyle *bool  `json:"path_style"`
	AWSAccess
	MaxAttempts   int  `json:"-"`
	MaxAttemptsIn *int `json:"max_attempts"`
}

// AppResult is the "workload" object of an app response.
type AppResult struct {
	Common
	Shape        string  `json:"shape"`
	Storage      string  `json:"storage"`
	Location     string  `json:"location"`
	InputSize    int64   `json:"input_size"`
	OutputSize   int64   `json:"output_size"`
	ReadS        float64 `json:"read_s"`
	ComputeS     float64 `json:"compute_s"`
	WriteS       float64 `json:"write_s"`
	ReadBytes    int64   `json:"read_bytes"`
	WriteBytes   int64   `json:"write_bytes"`
	Prepared     bool    `json:"prepared"`
	Dropped      bool    `json:"dropped"`
	ClientReused bool    `json:"client_reused"`
	Checksum     string  `json:"checksum"`
}

var appDefaults = map[string]struct{ input, output int64 }{
	"video":     {64 << 20, 64 << 10},
	"sort":      {16_000_000, 0}, // 160,000 records; output = input
	"inference": {4 << 20, 4 << 10},
}

const (
	recordSize = 100
	keySize    = 10
	// MaxAppInput bounds one input (it is held in memory, as the applications do).
	MaxAppInput = 4 << 30
	frameSize   = 1 << 20
	modelCols   = 1024
)

// blobStore is a storage for whole named blobs.
type blobStore interface {
	put(ctx context.Context, name string, b []byte) error
	get(ctx context.Context, name string) ([]byte, error)
	del(ctx context.Context, name string) error
	reused() bool
}

type s3Blobs struct {
	t s3Target
	c *objectClient
	r bool
}

func (s *s3Blobs) put(ctx context.Context, n string, b []byte) error {
	return s.t.put(ctx, s.c, s.t.prefix+n, b)
}
func (s *s3Blobs) get(ctx context.Context, n string) ([]byte, error) {
	b, _, err := s.t.get(ctx, s.c, s.t.prefix+n, nil)
	return b, err
}
func (s *s3Blobs) del(ctx context.Context, n string) error { return s.t.del(ctx, s.c, s.t.prefix+n) }
func (s *s3Blobs) reused() bool                            { return s.r }

type kvBlobs struct {
	t kvTarget
	c *kvClient
	r bool
}

func (s *kvBlobs) put(ctx context.Context, n string, b []byte) error {
	return s.t.put(ctx, s.c, s.t.prefix+n, b)
}
func (s *kvBlobs) get(ctx context.Context, n string) ([]byte, error) {
	return s.t.get(ctx, s.c, s.t.prefix+n)
}
func (s *kvBlobs) del(ctx context.Context, n string) error { return s.t.del(ctx, s.c, s.t.prefix+n) }
func (s *kvBlobs) reused() bool                            { return s.r }

// fileBlobs keeps blobs as files under a directory; names are the agent's own
// (app/{shape}/{index}/input), never the request's, and the directory is checked at Validate.
type fileBlobs struct{ dir string }

func (f *fileBlobs) path(n string) string { return filepath.Join(f.dir, filepath.FromSlash(n)) }
func (f *fileBlobs) put(_ context.Context, n string, b []byte) error {
	p := f.path(n)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return ioFailure("mkdir "+filepath.Dir(p), -1, err)
	}
	fd, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return ioFailure("open "+p, -1, err)
	}
	if _, err := fd.Write(b); err != nil {
		fd.Close()
		return ioFailure("write "+p, -1, err)
	}
	// Durable before write_s ends, as an object PUT is when it returns.
	if err := fd.Sync(); err != nil {
		fd.Close()
		return ioFailure("fsync "+p, -1, err)
	}
	return fd.Close()
}
func (f *fileBlobs) get(_ context.Context, n string) ([]byte, error) {
	b, err := os.ReadFile(f.path(n))
	if err != nil {
		return nil, ioFailure("read "+f.path(n), -1, err)
	}
	return b, nil
}
func (f *fileBlobs) del(_ context.Context, n string) error {
	if err := os.Remove(f.path(n)); err != nil && !os.IsNotExist(err) {
		return ioFailure("remove "+f.path(n), -1, err)
	}
	return nil
}
func (f *fileBlobs) reused() bool { return false }

func (a *App) Validate() error {
	if a.Shape == "" {
		return Invalid("workload.shape", "required (\"video\", \"sort\" or \"inference\")")
	}
	if err := oneOf("workload.shape", &a.Shape, "", "video", "sort", "inference"); err != nil {
		return err
	}
	if err := oneOf("workload.storage", &a.Storage, "object", "object", "kv", "sharedfs", "tmp"); err != nil {
		return err
	}
	d := appDefaults[a.Shape]
	a.InputSize = orDefault(a.InputSizeIn, d.input)
	if a.InputSize < 1 || a.InputSize > MaxAppInput {
		return Invalid("workload.input_size", "must be between 1 and %d bytes (got %d)", int64(MaxAppInput), a.InputSize)
	}
	switch a.Shape {
	case "sort":
		if a.InputSize%recordSize != 0 {
			return Invalid("workload.input_size", "must be a multiple of the %d-byte record for shape \"sort\" (got %d)", recordSize, a.InputSize)
		}
		if a.OutputSizeIn != nil && *a.OutputSizeIn != a.InputSize {
			return Invalid("workload.output_size", "is the input size for shape \"sort\" (got %d)", *a.OutputSizeIn)
		}
		d.output = a.InputSize
	case "inference":
		if a.InputSize < 4*modelCols || a.InputSize%(4*modelCols) != 0 {
			return Invalid("workload.input_size", "must be a multiple of %d bytes (rows of %d float32 weights) for shape \"inference\" (got %d)", 4*modelCols, modelCols, a.InputSize)
		}
	}
	a.OutputSize = orDefault(a.OutputSizeIn, d.output)
	if a.OutputSize < 1 || a.OutputSize > MaxAppInput {
		return Invalid("workload.output_size", "must be between 1 and %d bytes (got %d)", int64(MaxAppInput), a.OutputSize)
	}
	a.Layers = orDefault(a.LayersIn, 8)
	if a.Layers < 1 || a.Layers > 10000 {
		return Invalid("workload.layers", "must be between 1 and 10000 (got %d)", a.Layers)
	}
	if a.Shape != "inference" && a.Layers != 8 {
		return Invalid("workload.layers", "only for shape \"inference\"")
	}
	if a.Index < 0 {
		return Invalid("workload.index", "must not be negative (got %d)", a.Index)
	}
	if a.Prepare == nil {
		t := true
		a.Prepare = &t
	}
	if a.Drop == nil {
		t := true
		a.Drop = &t
	}
	noStorage := func(field string, set bool) error {
		if set {
			return Invalid("workload."+field, "does not apply to storage %q", a.Storage)
		}
		return nil
	}
	a.MaxAttempts = orDefault(a.MaxAttemptsIn, 1)
	awsSet := a.Region != "" || a.AccessKeyID != "" || a.SecretAccessKey != "" || a.SessionToken != ""
	switch a.Storage {
	case "object":
		if err := noStorage("root", a.Root != ""); err != nil {
			return err
		}
		if err := noStorage("backend", a.Backend != "" || a.Table != ""); err != nil {
			return err
		}
		t, err := newS3Target(a.Endpoint, a.Region, a.Bucket, a.Prefix, a.PathStyle, a.AccessKeyID, a.SecretAccessKey,
			a.SessionToken, "", a.MaxAttempts, "", DefaultMaxBackoffMs, 0)
		if err != nil {
			return err
		}
		a.store, a.where = &s3Blobs{t: t}, "s3://"+t.bucket+"/"+t.prefix
	case "kv":
		if err := noStorage("root", a.Root != ""); err != nil {
			return err
		}
		if err := noStorage("bucket", a.Bucket != "" || a.PathStyle != nil); err != nil {
			return err
		}
		t, err := newKVTarget(a.Backend, a.Endpoint, a.Table, a.Prefix, a.Region, a.AccessKeyID, a.SecretAccessKey,
			a.SessionToken, false, a.MaxAttempts, "", DefaultMaxBackoffMs, 0)
		if err != nil {
			return err
		}
		if t.backend == "dynamodb" && max(a.InputSize, a.OutputSize) > MaxItemSize {
			return Invalid("workload.input_size", "DynamoDB items hold at most %d bytes", MaxItemSize)
		}
		a.Backend = t.backend
		a.store, a.where = &kvBlobs{t: t}, t.backend+":"+t.prefix
	default:
		if err := noStorage("endpoint", a.Endpoint != "" || a.Bucket != "" || a.Table != "" || a.Backend != "" ||
			a.PathStyle != nil || awsSet || a.MaxAttemptsIn != nil || a.Prefix != ""); err != nil {
			return err
		}
		dir := os.TempDir()
		if a.Storage == "sharedfs" {
			r, err := sharedRoot(a.Root)
			if err != nil {
				return err
			}
			dir = r
		} else if a.Root != "" {
			return noStorage("root", true)
		}
		a.store, a.where = &fileBlobs{dir: dir}, dir
	}
	return nil
}

func (a *App) Run(ctx context.Context) (any, error) {
	if a.store == nil {
		if err := a.Validate(); err != nil {
			return nil, err
		}
	}
	switch s := a.store.(type) {
	case *s3Blobs:
		s.c, s.r = s.t.client(1)
	case *kvBlobs:
		s.c, s.r = s.t.client(1)
	}
	in := fmt.Sprintf("app/%s/%d/input", a.Shape, a.Index)
	out := fmt.Sprintf("app/%s/%d/output", a.Shape, a.Index)
	res := AppResult{Common: Common{Kind: "app"}, Shape: a.Shape, Storage: a.Storage, Location: a.where,
		InputSize: a.InputSize, OutputSize: a.OutputSize, ClientReused: a.store.reused()}
	if *a.Prepare {
		if err := a.store.put(ctx, in, a.input()); err != nil {
			return nil, prefixError("prepare: ", err)
		}
		res.Prepared = true
	}

	t0 := time.Now()
	data, err := a.store.get(ctx, in)
	if err != nil {
		return nil, prefixError("read input: ", err)
	}
	if int64(len(data)) != a.InputSize {
		return nil, &Error{Type: IOError, Message: fmt.Sprintf("read input: %d bytes, input_size says %d", len(data), a.InputSize)}
	}
	t1 := time.Now()
	output, sum := a.compute(data)
	data = nil
	t2 := time.Now()
	if err := a.store.put(ctx, out, output); err != nil {
		return nil, prefixError("write output: ", err)
	}
	t3 := time.Now()

	res.ReadS, res.ComputeS, res.WriteS = t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t3.Sub(t2).Seconds()
	res.ElapsedS = t3.Sub(t0).Seconds()
	res.ReadBytes, res.WriteBytes = a.InputSize, int64(len(output))
	res.Bytes, res.Ops = res.ReadBytes+res.WriteBytes, 2
	res.Checksum = sum
	if *a.Drop {
		for _, n := range []string{in, out} {
			if err := a.store.del(ctx, n); err != nil {
				return nil, prefixError("drop: ", err)
			}
		}
		res.Dropped = true
	}
	return res, nil
}

// input generates the shape's input deterministically from seed.
func (a *App) input() []byte {
	r := mrand.New(mrand.NewPCG(uint64(a.Seed), 0x6661617363))
	b := make([]byte, a.InputSize)
	if a.Shape == "inference" {
		for i := 0; i+4 <= len(b); i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(r.NormFloat64()*0.05)))
		}
		return b
	}
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}

// compute does the shape's work and returns the output and a short checksum of the result.
func (a *App) compute(data []byte) ([]byte, string) {
	switch a.Shape {
	case "sort":
		n := len(data) / recordSize
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortFunc(idx, func(x, y int32) int {
			return bytes.Compare(data[int(x)*recordSize:int(x)*recordSize+keySize], data[int(y)*recordSize:int(y)*recordSize+keySize])
		})
		out := make([]byte, 0, len(data))
		for _, i := range idx {
			out = append(out, data[int(i)*recordSize:int(i+1)*recordSize]...)
		}
		return out, fmt.Sprintf("%x", out[:min(len(out), keySize)])
	case "video":
		type frame struct {
			Mean float64 `json:"mean"`
			Diff float64 `json:"diff"`
		}
		var frames []frame
		var hist [256]int64
		for off := 0; off < len(data); off += frameSize {
			f := data[off:min(off+frameSize, len(data))]
			var sum, diff int64
			prev := f[0]
			for _, v := range f {
				hist[v]++
				sum += int64(v)
				d := int64(v) - int64(prev)
				if d < 0 {
					d = -d
				}
				diff += d
				prev = v
			}
			frames = append(frames, frame{Mean: float64(sum) / float64(len(f)), Diff: float64(diff) / float64(len(f))})
		}
		summary, _ := json.Marshal(map[string]any{"frames": len(frames), "histogram": hist, "per_frame": frames})
		return padTo(summary, a.OutputSize), fmt.Sprintf("%d", hist[0])
	default: // inference
		rows := len(data) / (4 * modelCols)
		w := make([]float32, rows*modelCols)
		for i := range w {
			w[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		x := make([]float32, modelCols)
		for i := range x {
			x[i] = float32(i%7) / 7
		}
		y := make([]float32, rows)
		for l := 0; l < a.Layers; l++ {
			for r := 0; r < rows; r++ {
				var s float32
				row := w[r*modelCols : (r+1)*modelCols]
				for c, v := range row {
					s += v * x[c]
				}
				if s < 0 { // ReLU
					s = 0
				}
				y[r] = s
			}
			for c := range x { // feed back (rows may differ from columns)
				x[c] = y[c%rows] + 1e-3
			}
		}
		out := make([]byte, 0, 4*rows)
		for _, v := range y {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		var s float64
		for _, v := range y {
			s += float64(v)
		}
		return padTo(out, a.OutputSize), fmt.Sprintf("%.6g", s)
	}
}

// padTo truncates or zero-pads b to exactly n bytes, so output_size is what is written.
func padTo(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}
