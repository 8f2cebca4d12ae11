package workloads

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// runDD runs the platform's dd, as the 2024 thesis did, so numbers can be compared with its.
// The argv is built from validated, typed parameters only and run without a shell: nothing
// from the request reaches dd as text except the confined path.
//
// count = ceil(file_size/io_size), so dd moves ceil(file_size/io_size)·io_size bytes on writes
// (whole blocks, like the thesis); reads stop at end of file. elapsed_s and bytes are dd's own
// figures from its summary line; wall_s is the agent's clock around the whole process.
func (f *FileIO) runDD(ctx context.Context) (_ any, err error) {
	res := f.result()
	defer func() {
		if err != nil {
			_ = os.Remove(f.resolved)
		}
	}()
	dd, lerr := exec.LookPath("dd")
	if lerr != nil {
		return nil, &Error{Type: IOError, Message: "engine \"dd\": no dd in PATH on this platform (" + lerr.Error() + ")"}
	}
	if *f.Prepare {
		if err := layOut(f.resolved, f.FileSize, f.Source); err != nil {
			return nil, err
		}
		res.Prepared = true
	}
	write := f.Op == "write"

	// Probe O_DIRECT ourselves: on file systems that refuse it, dd would fail, whereas native
	// falls back to buffered I/O; doing the same keeps the engines comparable.
	flags := unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_RDONLY
	if write {
		flags = unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_WRONLY | unix.O_CREAT
	}
	fd, direct, err := openFile(f.resolved, flags, f.Direct)
	if err != nil {
		return nil, err
	}
	fsName, inMemory := fsType(fd)
	unix.Close(fd)
	res.FSType = fsName

	count := (f.FileSize + f.IOSize - 1) / f.IOSize
	args := ddArgs(dd, f, count, direct, res.Prepared)
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "LC_ALL=C") // dd's summary line is parsed: no localised decimals
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start).Seconds()
	out := stderr.String()
	if runErr != nil {
		typ := IOError
		if strings.Contains(out, "No space left on device") {
			typ = NoSpace
		}
		return nil, &Error{Type: typ, Message: fmt.Sprintf("dd %s: %v: %s", f.Op, runErr, firstLine(out))}
	}
	n, secs, ok := parseDDSummary(out)
	if !ok {
		return nil, &Error{Type: IOError, Message: "dd: no summary line in its output: " + firstLine(out)}
	}
	res.Bytes = n
	res.ElapsedS = secs
	res.Ops = parseDDRecords(out, write, count)
	res.WallS = &wall
	res.DDCommand = args
	res.DirectEffective = direct && !inMemory
	if *f.Drop {
		if err := os.Remove(f.resolved); err != nil {
			return nil, ioFailure("remove", -1, err)
		}
		res.Dropped = true
	}
	res.finish()
	return res, nil
}

func ddArgs(dd string, f *FileIO, count int64, direct, inPlace bool) []string {
	bs := "bs=" + strconv.FormatInt(f.IOSize, 10)
	cnt := "count=" + strconv.FormatInt(count, 10)
	if f.Op == "read" {
		args := []string{dd, "if=" + f.resolved, "of=/dev/null", bs, cnt}
		if direct {
			args = append(args, "iflag=direct")
		}
		return args
	}
	src := "/dev/zero"
	if f.Source == "urandom" {
		src = "/dev/urandom"
	}
	args := []string{dd, "if=" + src, "of=" + f.resolved, bs, cnt}
	if f.Source == "urandom" && f.IOSize > 32<<20 {
		// A read of /dev/urandom returns at most 32 MiB - 1 bytes; without fullblock dd
		// would write short records and move fewer bytes than asked.
		args = append(args, "iflag=fullblock")
	}
	var oflags, conv []string
	if direct {
		oflags = append(oflags, "direct")
	}
	if f.Fsync == "every" {
		oflags = append(oflags, "dsync")
	}
	if f.Fsync == "end" {
		conv = append(conv, "fsync")
	}
	if inPlace {
		conv = append(conv, "notrunc")
	}
	if len(oflags) > 0 {
		args = append(args, "oflag="+strings.Join(oflags, ","))
	}
	if len(conv) > 0 {
		args = append(args, "conv="+strings.Join(conv, ","))
	}
	return args
}

// GNU coreutils: "268435456 bytes (268 MB, 256 MiB) copied, 0.31 s, 866 MB/s"
// ("1 byte copied, 4.1e-05 s, ..." for tiny runs); BusyBox:
// "268435456 bytes (256.0MB) copied, 0.31 seconds, 825.8MB/s".
var (
	ddSummary = regexp.MustCompile(`(?m)^(\d+) bytes? (?:\([^)]*\) )?copied, ([0-9.]+(?:[eE][-+]?[0-9]+)?) s(?:econds)?,`)
	ddRecords = regexp.MustCompile(`(?m)^(\d+)\+(\d+) records (in|out)$`)
)

func parseDDSummary(out string) (bytes int64, seconds float64, ok bool) {
	m := ddSummary.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, false
	}
	b, err1 := strconv.ParseInt(m[1], 10, 64)
	s, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return b, s, true
}

// parseDDRecords counts full plus partial records, i.e. the I/O calls dd made on the file.
func parseDDRecords(out string, write bool, fallback int64) int64 {
	want := "in"
	if write {
		want = "out"
	}
	for _, m := range ddRecords.FindAllStringSubmatch(out, -1) {
		if m[3] != want {
			continue
		}
		full, _ := strconv.ParseInt(m[1], 10, 64)
		part, _ := strconv.ParseInt(m[2], 10, 64)
		return full + part
	}
	return fallback
}

// firstLine is where dd puts its error ("dd: error writing ...: No space left on device").
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}
