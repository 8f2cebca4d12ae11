package platform

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// functionStore persists functions under dataDir/functions/<name>/ (us-east-1) or
// <name>.<region>/ (other regions; names have no dots) so a restarted platform still knows
// them. A function's directory holds function.json (configuration, tags, versions, aliases),
// code.zip ($LATEST's package) and versions/<n>.zip (hard links to the package each version
// was published with: code.zip is replaced by a rename, never rewritten, so a link keeps the
// old package at no cost).
type functionStore struct{ dir string }

func (s functionStore) funcDir(k fnKey) string {
	return filepath.Join(s.dir, regionalName(k.Region, k.Name))
}

func (s functionStore) codePath(k fnKey) string {
	return filepath.Join(s.funcDir(k), "code.zip")
}

func (s functionStore) versionCodePath(k fnKey, version string) string {
	return filepath.Join(s.funcDir(k), "versions", version+".zip")
}

// linkVersion keeps $LATEST's current package as a version's.
func (s functionStore) linkVersion(k fnKey, version string) error {
	dst := s.versionCodePath(k, version)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	os.Remove(dst) // left by a publish whose function.json was never written
	return os.Link(s.codePath(k), dst)
}

func (s functionStore) removeVersion(k fnKey, version string) error {
	return os.Remove(s.versionCodePath(k, version))
}

// stagingDir holds packages being uploaded. It lies inside the store so that committing one is
// a rename within a file system; its name is no function's (names have no dots), so loadAll
// passes over it.
func (s functionStore) stagingDir() string { return filepath.Join(s.dir, ".staging") }

// stagedCode is a package written to the staging directory and not yet any function's.
type stagedCode struct {
	path   string // "" once committed
	size   int64
	sha256 string
}

// stage writes a package to a file of its own in the staging directory, hashing it on the
// way, and checks it as Lambda does at upload: at most maxZippedBytes, a zip, at most
// maxUnzippedBytes unpacked (codeupload.go). This is the slow part of a create or an update, so
// it runs before any lock is taken. A package the API already streamed into the staging
// directory (an *upload) is adopted as it is, not copied again.
func (s functionStore) stage(code io.Reader) (*stagedCode, error) {
	var staged *stagedCode
	if o, ok := code.(*s3Object); ok { // streamed from S3 into the staging directory (s3code.go)
		var err error
		if staged, err = o.fetch(s); err != nil {
			return nil, err
		}
	} else if u, ok := code.(*upload); ok {
		var err error
		if staged, err = u.finish(); err != nil {
			return nil, err
		}
	} else {
		u, err := s.newUpload()
		if err != nil {
			return nil, err
		}
		if _, err = io.Copy(u, code); err != nil {
			u.discard()
			return nil, err
		}
		if staged, err = u.finish(); err != nil {
			return nil, err
		}
	}
	if staged.size == 0 {
		return staged, nil // the caller refuses it with its own message
	}
	if err := checkPackage(staged.path); err != nil {
		staged.discard()
		return nil, err
	}
	return staged, nil
}

// discard removes a package that was not committed (a create that lost a race, an update of a
// function deleted meanwhile, a validation error); after commit it does nothing.
func (c *stagedCode) discard() {
	if c != nil && c.path != "" {
		os.Remove(c.path)
		c.path = ""
	}
}

// commit makes f's state the persisted one, moving code (when not nil) into place as its
// package. The caller serialises commits of the same function.
func (s functionStore) commit(f *Function, code *stagedCode) error {
	if err := s.placeCode(f.key(), code); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(f, "", " ")
	return writeAtomic(filepath.Join(s.funcDir(f.key()), "function.json"), b)
}

// placeCode moves a staged package into place as a function's (nothing when code is nil).
func (s functionStore) placeCode(k fnKey, code *stagedCode) error {
	if err := os.MkdirAll(s.funcDir(k), 0o700); err != nil {
		return err
	}
	if code == nil {
		return nil
	}
	if err := os.Rename(code.path, s.codePath(k)); err != nil {
		return err
	}
	code.path = ""
	return nil
}

func (s functionStore) remove(k fnKey) error {
	return os.RemoveAll(s.funcDir(k))
}

// clearStaging removes what uploads cut short by a crash left behind.
func (s functionStore) clearStaging() error {
	return os.RemoveAll(s.stagingDir())
}

func (s functionStore) loadAll() (map[fnKey]*Function, error) {
	out := map[fnKey]*Function{}
	entries, err := os.ReadDir(s.dir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name(), "function.json"))
		if err != nil {
			continue // a half-created function: CreateFunction never answered, so it never existed
		}
		var f Function
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		fillShape(&f.Config) // stored before configshape.go
		for _, v := range f.Versions {
			fillShape(&v.Config)
		}
		out[f.key()] = &f
	}
	return out, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
