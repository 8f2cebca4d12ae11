package platform

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeLang makes <runtimes>/lang/<runtime> with the given stamp and, when exe, an executable
// bin/python3 (a link, as make install leaves it).
func fakeLang(t *testing.T, runtimes, runtime, stamp string, exe bool) string {
	t.Helper()
	dir := filepath.Join(runtimes, langDirName, runtime)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if stamp != "" {
		if err := os.WriteFile(filepath.Join(dir, langStamp), []byte(stamp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if exe {
		if err := os.WriteFile(filepath.Join(dir, "bin", "python3.x"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("python3.x", filepath.Join(dir, "bin", "python3")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExactInterpreterDirResolution: a runtime has its exact interpreter only where a build of
// its own version is stamped and runnable; anything else (none, half-built, another version's,
// a version that only starts like it, a non-Python runtime, no runtimes directory) is none, and
// the runtime runs on the machine's with the note.
func TestExactInterpreterDirResolution(t *testing.T) {
	rt := t.TempDir()
	py312, _ := LookupRuntime("python3.12")
	good := fakeLang(t, rt, "python3.12", "CPython 3.12.14 abc", true)
	if got := exactInterpreterDir(rt, py312); got != good {
		t.Errorf("built python3.12: %q, want %q", got, good)
	}
	for _, c := range []struct {
		runtime, stamp string
		exe            bool
		why            string
	}{
		{"python3.13", "", true, "no stamp (a build that did not finish)"},
		{"python3.10", "CPython 3.10.21 abc", false, "no bin/python3"},
		{"python3.11", "CPython 3.12.14 abc", true, "another version's build"},
		{"python3.9", "CPython 3.90.1 abc", true, "3.90 is not 3.9"},
		{"python3.14", "PyPy 3.14.0 abc", true, "not CPython"},
	} {
		fakeLang(t, rt, c.runtime, c.stamp, c.exe)
		r, _ := LookupRuntime(c.runtime)
		if got := exactInterpreterDir(rt, r); got != "" {
			t.Errorf("%s, %s: %q, want none", c.runtime, c.why, got)
		}
	}
	if got := exactInterpreterDir(rt, Runtime{"nodejs20.x", FamilyNode, "20"}); got != "" {
		t.Errorf("nodejs20.x: %q", got)
	}
	if got := exactInterpreterDir("", py312); got != "" {
		t.Errorf("no runtimes directory: %q", got)
	}
}

// TestNoNoteWithTheExactInterpreter: the note goes where the exact interpreter is built and stays
// where it is not (the platform's own resolution, as GetFunction's StateReason gets it).
func TestNoNoteWithTheExactInterpreter(t *testing.T) {
	have := InterpreterVersions()[FamilyPython]
	if have == "" || have == "3.12" || have == "3.13" {
		t.Skip("the machine's own python3 is not an older one: no note to check")
	}
	rt := t.TempDir()
	fakeLang(t, rt, "python3.12", "CPython 3.12.14 abc", true)
	p := &Platform{cfg: Config{RuntimesDir: rt}}
	if note := p.runtimeNote("python3.12"); note != "" {
		t.Errorf("python3.12 with its interpreter: note %q", note)
	}
	if note := p.runtimeNote("python3.13"); note == "" || note != RuntimeNote("python3.13") {
		t.Errorf("python3.13 without its interpreter: note %q, want %q", note, RuntimeNote("python3.13"))
	}
	if p.langDirOf("python3.12") == "" || p.langDirOf("python3.13") != "" || p.langDirOf("java21") != "" {
		t.Error("langDirOf disagrees with exactInterpreterDir")
	}
}

// TestInterpreterPinsAreTableRuntimes: every interpreter scripts/interpreters.txt pins (the one
// source of their versions and hashes) is a python runtime of the table, of its version, with a
// sha256, once.
func TestInterpreterPinsAreTableRuntimes(t *testing.T) {
	f, err := os.Open("../../scripts/interpreters.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sha := regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 3 {
			t.Errorf("%q: want runtime, version, sha256", sc.Text())
			continue
		}
		r, ok := LookupRuntime(fields[0])
		switch {
		case !ok || r.Family != FamilyPython:
			t.Errorf("%s is not a python runtime of the table", fields[0])
		case !strings.HasPrefix(fields[1]+".", r.Version+".") || strings.Count(fields[1], ".") != 2:
			t.Errorf("%s pins CPython %s, not a %s.x release", fields[0], fields[1], r.Version)
		case !sha.MatchString(fields[2]):
			t.Errorf("%s: %q is not a sha256", fields[0], fields[2])
		case seen[fields[0]]:
			t.Errorf("%s pinned twice", fields[0])
		}
		seen[fields[0]] = true
	}
	if len(seen) == 0 {
		t.Error("no interpreter pinned")
	}
}
