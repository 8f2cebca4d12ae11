package platform

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests hold a package upload still in the middle of being written to disk, and look at
// what the rest of the platform can do meanwhile. They assert orderings, not durations: the
// minute-long limits only turn a deadlock into a failure.

// stallingReader is a package that arrives in two halves: after the first it blocks until
// resumed, as a large upload from a slow client does.
type stallingReader struct {
	data    []byte
	off     int
	stalled chan struct{} // closed when the first half has been read
	resume  chan struct{}
	once    sync.Once
	resumed sync.Once
}

func newStallingReader(data []byte) *stallingReader {
	return &stallingReader{data: data, stalled: make(chan struct{}), resume: make(chan struct{})}
}

// release lets the second half through; tests also defer it, so that a failure does not leave
// the upload (and whatever lock a regression makes it hold) stuck forever.
func (r *stallingReader) release() { r.resumed.Do(func() { close(r.resume) }) }

func (r *stallingReader) Read(b []byte) (int, error) {
	half := len(r.data) / 2
	if r.off == half {
		r.once.Do(func() { close(r.stalled); <-r.resume })
	}
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	end := len(r.data)
	if r.off < half {
		end = half
	}
	n := copy(b, r.data[r.off:end])
	r.off += n
	return n, nil
}

// paddedZip is the agent's package with a stored file of pad bytes: a different, larger package
// that still runs.
func paddedZip(t *testing.T, pad int) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(agentZip), int64(len(agentZip)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "padding", Method: zip.Store})
	w.Write(make([]byte, pad))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func shaOf(b []byte) string {
	s := sha256.Sum256(b)
	return codeSha256(s[:])
}

func fileSha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return shaOf(b)
}

func createInput(name string, code io.Reader) CreateFunctionInput {
	return CreateFunctionInput{Name: name, Runtime: "provided.al2023", Role: "arn:aws:iam::000000000000:role/r", Handler: "bootstrap",
		Architecture: hostArch(), Code: code}
}

// invokeAsyncHTTP invokes a function through the Lambda API from another goroutine.
func (tp *testPlatform) invokeAsyncHTTP(name string) <-chan string {
	out := make(chan string, 1)
	go func() {
		resp, err := http.Post(tp.url+"/2015-03-31/functions/"+name+"/invocations", "application/json",
			strings.NewReader(`{"workload":{"kind":"noop"}}`))
		if err != nil {
			out <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- resp.Status + " " + resp.Header.Get("X-Amz-Function-Error") + " " + string(b)
	}()
	return out
}

func wantInvokeWhileStalled(t *testing.T, tp *testPlatform, name string, upload <-chan error) {
	t.Helper()
	select {
	case got := <-tp.invokeAsyncHTTP(name):
		if !strings.HasPrefix(got, "200 OK  ") || !strings.Contains(got, `"ok":true`) {
			t.Fatalf("invoke of %s during the upload: %s", name, got)
		}
	case err := <-upload:
		t.Fatalf("the upload ended before it was resumed: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("invoke of %s is blocked while a package is being written", name)
	}
}

func TestInvokeIsNotBlockedWhileAPackageIsWritten(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("a", nil)
	tp.create("b", nil)
	oldB, _ := tp.GetFunction(ref("b"))
	pkg := paddedZip(t, 4<<20)

	t.Run("CreateFunction", func(t *testing.T) {
		code := newStallingReader(pkg)
		defer code.release()
		upload := make(chan error, 1)
		go func() { _, err := tp.CreateFunction(createInput("c", code)); upload <- err }()
		<-code.stalled // half of c's package is on disk, the rest waits
		wantInvokeWhileStalled(t, tp, "a", upload)
		if _, err := tp.GetFunction(ref("c")); err == nil {
			t.Fatal("c is visible before its package is complete")
		}
		code.release()
		if err := <-upload; err != nil {
			t.Fatal(err)
		}
		waitReady(t, tp.Platform, "c")
		c, err := tp.GetFunction(ref("c"))
		if err != nil || c.Config.CodeSha256 != shaOf(pkg) || c.Config.CodeSize != int64(len(pkg)) {
			t.Fatalf("c after the upload: %+v %v", c.Config, err)
		}
		wantInvokeWhileStalled(t, tp, "c", nil) // the whole package arrived and runs
	})

	t.Run("UpdateFunctionCode", func(t *testing.T) {
		code := newStallingReader(pkg)
		defer code.release()
		upload := make(chan error, 1)
		go func() { _, err := tp.UpdateCode(key("b"), code, false); upload <- err }()
		<-code.stalled
		wantInvokeWhileStalled(t, tp, "a", upload)
		// b itself keeps serving its current code until the new one is committed.
		wantInvokeWhileStalled(t, tp, "b", upload)
		if now, _ := tp.GetFunction(ref("b")); now.Config.CodeSha256 != oldB.Config.CodeSha256 {
			t.Fatal("b's configuration changed before its new package was complete")
		}
		code.release()
		if err := <-upload; err != nil {
			t.Fatal(err)
		}
		if b, _ := tp.GetFunction(ref("b")); b.Config.CodeSha256 != shaOf(pkg) || fileSha(t, b.CodePath) != shaOf(pkg) {
			t.Fatalf("b's package after the update: %s", b.Config.CodeSha256)
		}
	})
}

func TestCreateThatLosesARaceGetsAConflictAndRemovesItsPackage(t *testing.T) {
	tp := startPlatform(t, Config{})
	slow := newStallingReader(paddedZip(t, 1<<20))
	defer slow.release()
	upload := make(chan error, 1)
	go func() { _, err := tp.CreateFunction(createInput("r", slow)); upload <- err }()
	<-slow.stalled // past the check for an existing name, writing its package
	won, err := tp.CreateFunction(createInput("r", bytes.NewReader(agentZip)))
	if err != nil {
		t.Fatal(err)
	}
	slow.release()
	err = <-upload
	var conflict *conflictError
	if !errors.As(err, &conflict) || awsError(err).Code != "ResourceConflictException" || awsError(err).Status != http.StatusConflict {
		t.Fatalf("the create that lost the race: %v", err)
	}
	if left, _ := os.ReadDir(tp.store.stagingDir()); len(left) != 0 {
		t.Fatalf("the loser's package was left behind: %v", left)
	}
	r, _ := tp.GetFunction(ref("r"))
	if r.Config.CodeSha256 != won.CodeSha256 || fileSha(t, r.CodePath) != shaOf(agentZip) {
		t.Fatal("the winner's package must be the one in place")
	}
}

func TestCodeUpdatesCommitInTheOrderTheyFinishUploading(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("u", nil)
	firstPkg, secondPkg := paddedZip(t, 1<<20), paddedZip(t, 2<<20)
	first := newStallingReader(firstPkg)
	defer first.release()
	upload := make(chan error, 1)
	go func() { _, err := tp.UpdateCode(key("u"), first, false); upload <- err }()
	<-first.stalled
	if _, err := tp.UpdateCode(key("u"), bytes.NewReader(secondPkg), false); err != nil {
		t.Fatal(err) // a stalled upload does not hold up another change of the same function
	}
	waitReady(t, tp.Platform, "u") // Lambda refuses an update while one is in progress
	first.release()
	if err := <-upload; err != nil {
		t.Fatal(err)
	}
	// The first upload finished last, so its package wins, in memory and on disk alike.
	u, _ := tp.GetFunction(ref("u"))
	if u.Config.CodeSha256 != shaOf(firstPkg) || fileSha(t, u.CodePath) != shaOf(firstPkg) {
		t.Fatalf("memory says %s, disk has %s, want %s", u.Config.CodeSha256, fileSha(t, u.CodePath), shaOf(firstPkg))
	}
	if left, _ := os.ReadDir(tp.store.stagingDir()); len(left) != 0 {
		t.Fatalf("staged packages left behind: %v", left)
	}
}

func TestUpdateOrInvokeOfAMissingFunctionIsNotFound(t *testing.T) {
	tp := startPlatform(t, Config{})
	for op, call := range map[string]func() error{
		"UpdateCode":          func() error { _, err := tp.UpdateCode(key("gone"), bytes.NewReader(agentZip), false); return err },
		"UpdateConfiguration": func() error { _, err := tp.UpdateConfiguration(key("gone"), ConfigurationUpdate{}); return err },
		"DeleteFunction":      func() error { return tp.DeleteFunction(ref("gone")) },
		"InvokeAsync":         func() error { return tp.InvokeAsync(InvokeRequest{Name: "gone", Payload: []byte("{}")}) },
	} {
		if err := call(); awsError(err).Code != "ResourceNotFoundException" {
			t.Errorf("%s: %v", op, err)
		}
	}
	if left, _ := os.ReadDir(tp.store.stagingDir()); len(left) != 0 {
		t.Fatalf("an update of a missing function left its package behind: %v", left)
	}
}
