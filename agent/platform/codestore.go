package platform

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The code store holds every package and every combination of layers unpacked once, in a
// directory named by its content, shared read-only by the instances that run it: a cold start
// bind-mounts the directory at /var/task (a package) or /opt (a function's layers, in order),
// instead of unpacking a zip of up to 250 MB for every instance.
//
//   - Content-addressed: a package's entry is "task-<hex SHA-256 of the zip>", a combination of
//     layers' "opt-<hex SHA-256 of the layers' hashes in order>". A new code version is a new
//     directory; an entry is never written after it is complete (built in a temporary directory,
//     then renamed into place), and a sandbox sees it through a read-only bind mount.
//   - The package's check at CreateFunction/UpdateFunctionCode (lifecycle.go) is the one build
//     of its entry; a cold start that finds none (an entry garbage-collected, or one built before
//     a reboot) builds it then, with the unpacker's own errors.
//   - Garbage collection (collect) removes an entry that no function, version or layer
//     combination in use refers to and no running sandbox holds (acquire/release count them).
//   - A platform restart reuses complete entries made since the machine booted: each has a
//     "<name>.ok" file holding the kernel's boot id, written after its directory was renamed into
//     place. An entry of an earlier boot may have lost pages it was never synced with, so it is
//     removed and rebuilt; one without its ".ok" (cut short by a crash) too.
type codeStore struct {
	dir    string
	bootID string

	mu       sync.Mutex
	refs     map[string]int        // running sandboxes per entry
	building map[string]*codeBuild // entries being built: later callers wait for the first
}

type codeBuild struct {
	done chan struct{}
	name string // the entry built ("" on error)
	err  error
}

// codeRef is a sandbox's hold on a store entry; release it when the sandbox is gone.
type codeRef struct {
	store *codeStore
	Name  string
	Dir   string
	once  sync.Once
}

func newCodeStore(dir string) (*codeStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	s := &codeStore{dir: dir, bootID: strings.TrimSpace(string(boot)), refs: map[string]int{},
		building: map[string]*codeBuild{}}
	s.clean()
	return s, nil
}

// clean removes what a crash or an earlier boot left: temporary and half-renamed entries and
// entries without this boot's ".ok".
func (s *codeStore) clean() {
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".tmp-"), strings.HasPrefix(name, ".trash-"):
			removeTree(filepath.Join(s.dir, name))
		case e.IsDir() && !s.complete(name):
			os.Remove(filepath.Join(s.dir, name+".ok"))
			removeTree(filepath.Join(s.dir, name))
		case strings.HasSuffix(name, ".ok"):
			if _, err := os.Stat(filepath.Join(s.dir, strings.TrimSuffix(name, ".ok"))); err != nil {
				os.Remove(filepath.Join(s.dir, name))
			}
		}
	}
}

func (s *codeStore) complete(name string) bool {
	b, err := os.ReadFile(filepath.Join(s.dir, name+".ok"))
	return err == nil && strings.TrimSpace(string(b)) == s.bootID && s.bootID != ""
}

// codeEntryName is the entry of a package whose CodeSha256 (base64, as Lambda shows it) is sha.
func codeEntryName(sha string) string {
	b, err := base64.StdEncoding.DecodeString(sha)
	if err != nil || len(b) != sha256.Size {
		return ""
	}
	return "task-" + hex.EncodeToString(b)
}

// optEntryName is the entry of these layers' packages (their CodeSha256s) in mount order.
func optEntryName(shas []string) string {
	h := sha256.New()
	for _, s := range shas {
		if s == "" {
			return ""
		}
		io.WriteString(h, s+"\n")
	}
	return "opt-" + hex.EncodeToString(h.Sum(nil))
}

// fileSha256 is a file's SHA-256, base64-encoded as CodeSha256 is.
func fileSha256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// acquire returns the entry named name, building it with build when there is none, and holds it
// until release. build fills a new directory and says the entry it really holds (its content's
// name, normally name itself: a package replaced after its configuration was read gives another).
// Concurrent acquisitions of one missing entry build it once.
func (s *codeStore) acquire(name string, build func(dir string) (string, error)) (*codeRef, error) {
	for {
		s.mu.Lock()
		if b := s.building[name]; b != nil {
			s.mu.Unlock()
			<-b.done
			if b.err != nil {
				return nil, b.err
			}
			if b.name != name { // built under its content's name: hold that one
				return s.acquireBuilt(b.name)
			}
			continue
		}
		// An entry a running sandbox holds is complete and cannot be collected: no need to read
		// its ".ok" from disk under the store's lock (a burst's cold starts queued behind it).
		if name != "" && (s.refs[name] > 0 || s.complete(name)) {
			s.refs[name]++
			s.mu.Unlock()
			return &codeRef{store: s, Name: name, Dir: filepath.Join(s.dir, name)}, nil
		}
		b := &codeBuild{done: make(chan struct{})}
		key := name
		if key == "" {
			key = ".anonymous-" + randomName() // no name to share it by
		}
		s.building[key] = b
		s.mu.Unlock()

		b.name, b.err = s.build(build)
		s.mu.Lock()
		delete(s.building, key)
		if b.err == nil {
			s.refs[b.name]++
		}
		s.mu.Unlock()
		close(b.done)
		if b.err != nil {
			return nil, b.err
		}
		return &codeRef{store: s, Name: b.name, Dir: filepath.Join(s.dir, b.name)}, nil
	}
}

// acquireBuilt holds an entry another caller has just built.
func (s *codeStore) acquireBuilt(name string) (*codeRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.complete(name) {
		return nil, fmt.Errorf("code store entry %s vanished", name)
	}
	s.refs[name]++
	return &codeRef{store: s, Name: name, Dir: filepath.Join(s.dir, name)}, nil
}

// build makes an entry: into a temporary directory, renamed into place, then marked complete.
func (s *codeStore) build(fill func(dir string) (string, error)) (string, error) {
	tmp := filepath.Join(s.dir, ".tmp-"+randomName())
	name, err := fill(tmp)
	if err != nil {
		removeTree(tmp)
		return "", err
	}
	if name == "" || strings.ContainsAny(name, "/.") {
		removeTree(tmp)
		return "", fmt.Errorf("code store: bad entry name %q", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	final := filepath.Join(s.dir, name)
	if s.complete(name) { // built meanwhile under the same content (another name asked for it)
		go removeTree(tmp)
		return name, nil
	}
	os.Remove(final + ".ok")
	removeTree(final) // incomplete: never mounted (acquire holds only complete entries)
	if err := os.Rename(tmp, final); err != nil {
		removeTree(tmp)
		return "", err
	}
	if err := os.WriteFile(final+".ok", []byte(s.bootID+"\n"), 0o600); err != nil {
		return "", err
	}
	return name, nil
}

// release ends a sandbox's hold on its entry (once, whatever calls it again).
func (r *codeRef) release() {
	if r == nil {
		return
	}
	r.once.Do(func() {
		r.store.mu.Lock()
		if r.store.refs[r.Name]--; r.store.refs[r.Name] <= 0 {
			delete(r.store.refs, r.Name)
		}
		r.store.mu.Unlock()
	})
}

// collect removes the entries not in keep that no sandbox holds and nobody is building.
func (s *codeStore) collect(keep map[string]bool) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	var trash []string
	s.mu.Lock()
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || keep[name] || s.refs[name] > 0 || s.building[name] != nil {
			continue
		}
		// First no longer complete, so no acquire can hold it; then out of the way.
		os.Remove(filepath.Join(s.dir, name+".ok"))
		t := filepath.Join(s.dir, ".trash-"+randomName())
		if err := os.Rename(filepath.Join(s.dir, name), t); err != nil {
			log.Printf("code store: remove %s: %v", name, err)
			continue
		}
		trash = append(trash, t)
	}
	s.mu.Unlock()
	for _, t := range trash {
		removeTree(t)
	}
}

// buildPackage unpacks a function's package, naming the entry by the zip's content.
func buildPackage(zipPath string) func(dir string) (string, error) {
	return func(dir string) (string, error) {
		if err := unzip(zipPath, dir); err != nil {
			return "", err
		}
		sha, err := fileSha256(zipPath)
		if err != nil {
			return "", err
		}
		return codeEntryName(sha), makeReadOnly(dir)
	}
}

// buildLayers unpacks layers in order into one directory (a later layer's file replaces an
// earlier one's, as in Lambda's /opt); label names a layer in an error.
func buildLayers(zips []string, label func(zip string) string) func(dir string) (string, error) {
	return func(dir string) (string, error) {
		shas := make([]string, 0, len(zips))
		for _, z := range zips {
			if err := unzip(z, dir); err != nil {
				return "", fmt.Errorf("unpack layer %s: %w", label(z), err)
			}
			sha, err := fileSha256(z)
			if err != nil {
				return "", err
			}
			shas = append(shas, sha)
		}
		return optEntryName(shas), makeReadOnly(dir)
	}
}

// makeReadOnly takes the write bits off an entry's files and directories: a sandbox sees it
// through a read-only bind mount anyway; this guards it where there is none (--isolation none,
// where the bootstrap runs as the platform's own user).
func makeReadOnly(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return os.Chmod(path, fi.Mode().Perm()&^0o222)
	})
}

// removeTree removes an entry, giving its directories their write bit back first (a non-root
// platform could not empty them otherwise).
func removeTree(path string) error {
	filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}

// codeCollectTicks is how often (in reaper ticks of 100 ms) unused entries are collected.
const codeCollectTicks = 50

// optEntry is the code store's entry for a function's layers ("" without layers, or when one is
// unknown: the entry is then built under its content's name). The caller holds p.mu.
func (p *Platform) optEntry(layers []LayerRef) string {
	if len(layers) == 0 {
		return ""
	}
	shas := make([]string, 0, len(layers))
	for _, l := range layers {
		key, v, ok := layerVersionKey(l.Arn)
		if !ok {
			return ""
		}
		lv := p.layers[key][v]
		if lv == nil {
			return ""
		}
		shas = append(shas, lv.CodeSha256)
	}
	return optEntryName(shas)
}

// collectCode removes the code store's entries that no function's $LATEST or version refers to
// and no running instance holds.
func (p *Platform) collectCode() {
	keep := map[string]bool{}
	p.mu.Lock()
	for _, f := range p.functions {
		keep[codeEntryName(f.Config.CodeSha256)] = true
		keep[p.optEntry(f.Config.Layers)] = true
		for _, v := range f.Versions {
			keep[codeEntryName(v.Config.CodeSha256)] = true
			keep[p.optEntry(v.Config.Layers)] = true
		}
	}
	p.mu.Unlock()
	p.code.collect(keep)
}

// randomName is a name no other temporary entry has.
func randomName() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
