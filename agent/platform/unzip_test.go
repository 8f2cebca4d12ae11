package platform

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zipEntry is one entry of a test archive: a file, or a symbolic link to Link.
type zipEntry struct{ Name, Body, Link string }

func writeZip(t *testing.T, path string, entries ...zipEntry) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate}
		body := e.Body
		if e.Link != "" {
			h.SetMode(os.ModeSymlink | 0o777)
			body = e.Link
		} else {
			h.SetMode(0o644)
		}
		w, err := z.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// Lambda keeps symbolic links in packages and layers (native-library layers link libfoo.so to
// libfoo.so.1); they used to be refused at the cold start.
func TestUnzipKeepsSymbolicLinks(t *testing.T) {
	dir := t.TempDir()
	z := writeZip(t, filepath.Join(dir, "layer.zip"),
		zipEntry{Name: "lib/libfoo.so", Link: "libfoo.so.1"},
		zipEntry{Name: "lib/libfoo.so.1", Body: "ELF"},
		zipEntry{Name: "bin/tool", Link: "/opt/lib/libfoo.so.1"})
	out := filepath.Join(dir, "opt")
	if err := unzip(z, out); err != nil {
		t.Fatal(err)
	}
	if to, err := os.Readlink(filepath.Join(out, "lib/libfoo.so")); err != nil || to != "libfoo.so.1" {
		t.Fatalf("lib/libfoo.so -> %q, %v", to, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "lib/libfoo.so")); err != nil || string(b) != "ELF" {
		t.Fatalf("reading through the link: %q, %v", b, err)
	}
	// An absolute target is kept as it is: it resolves in the sandbox's root, not the host's.
	if to, _ := os.Readlink(filepath.Join(out, "bin/tool")); to != "/opt/lib/libfoo.so.1" {
		t.Fatalf("bin/tool -> %q", to)
	}
}

// The host unpacks: nothing may be written through a link, whatever the entries' order or the
// layers' order.
func TestUnzipNeverWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(outside, 0o755)
	out := filepath.Join(dir, "opt")

	// One archive: a link to a directory outside, then a file below it (links are made last,
	// so the file makes a real directory, and the link then cannot take its place).
	z1 := writeZip(t, filepath.Join(dir, "a.zip"),
		zipEntry{Name: "d", Link: outside}, zipEntry{Name: "d/evil", Body: "x"})
	unzip(z1, out)
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Fatal("a file was written through a link in the same archive")
	}

	// Two layers: the first leaves a link to outside, the second writes below it.
	out2 := filepath.Join(dir, "opt2")
	if err := unzip(writeZip(t, filepath.Join(dir, "b.zip"), zipEntry{Name: "d", Link: outside}), out2); err != nil {
		t.Fatal(err)
	}
	for _, e := range []zipEntry{{Name: "d/evil", Body: "x"}, {Name: "d/evil", Link: "/etc/passwd"}, {Name: "d/sub/", Body: ""}} {
		err := unzip(writeZip(t, filepath.Join(dir, "c.zip"), e), out2)
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("entry %+v below an earlier layer's link: err = %v", e, err)
		}
		if es, _ := os.ReadDir(outside); len(es) != 0 {
			t.Fatalf("entry %+v wrote outside: %v", e, es)
		}
	}

	// A later layer's file in a link's place replaces the link instead of writing through it.
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("host"), 0o644)
	out3 := filepath.Join(dir, "opt3")
	unzip(writeZip(t, filepath.Join(dir, "d.zip"), zipEntry{Name: "f", Link: victim}), out3)
	if err := unzip(writeZip(t, filepath.Join(dir, "e.zip"), zipEntry{Name: "f", Body: "layer"}), out3); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "host" {
		t.Fatalf("the host file was overwritten through a link: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out3, "f")); string(b) != "layer" {
		t.Fatalf("f = %q, want the later layer's file", b)
	}
}
