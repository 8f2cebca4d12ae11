package platform

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
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
	if got := exactInterpreterDir(rt, Runtime{"provided.al2023", FamilyProvided, ""}); got != "" {
		t.Errorf("provided.al2023: %q", got)
	}
	// Node: its own stamp and program; a CPython stamp is not a Node build.
	node := filepath.Join(rt, langDirName, "nodejs22.x")
	os.MkdirAll(filepath.Join(node, "bin"), 0o755)
	os.WriteFile(filepath.Join(node, "bin", "node"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(node, langStamp), []byte("CPython 22.1.0 abc\n"), 0o644)
	n22, _ := LookupRuntime("nodejs22.x")
	if got := exactInterpreterDir(rt, n22); got != "" {
		t.Errorf("nodejs22.x stamped CPython: %q", got)
	}
	os.WriteFile(filepath.Join(node, langStamp), []byte("Node 22.23.3 abc\n"), 0o644)
	if got := exactInterpreterDir(rt, n22); got != node {
		t.Errorf("built nodejs22.x: %q, want %q", got, node)
	}
	n18, _ := LookupRuntime("nodejs18.x")
	if got := exactInterpreterDir(rt, n18); got != "" {
		t.Errorf("nodejs18.x, nothing built: %q", got)
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
	// Node alike, where the machine's Node is not 18.
	if node := InterpreterVersions()[FamilyNode]; node != "" && node != "18" {
		note := p.runtimeNote("nodejs18.x")
		if !strings.Contains(note, "Node.js "+node) || !strings.Contains(note, "Node.js 18") {
			t.Errorf("nodejs18.x without its interpreter: note %q", note)
		}
		dir := filepath.Join(rt, langDirName, "nodejs18.x", "bin")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "node"), []byte("#!/bin/sh\n"), 0o755)
		os.WriteFile(filepath.Join(rt, langDirName, "nodejs18.x", langStamp), []byte("Node 18.20.8 abc\n"), 0o644)
		if note := p.runtimeNote("nodejs18.x"); note != "" {
			t.Errorf("nodejs18.x with its interpreter: note %q", note)
		}
	}
}

// TestInterpreterPinsAreTableRuntimes: every interpreter scripts/interpreters.txt pins (the one
// source of their versions and hashes) is a python or nodejs runtime of the table, of its version,
// with a sha256, once.
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
		case !ok || langBuilds[r.Family].kind == "":
			t.Errorf("%s is not a python or nodejs runtime of the table", fields[0])
		case !strings.HasPrefix(fields[1]+".", r.Version+".") || strings.Count(fields[1], ".") != 2:
			t.Errorf("%s pins %s, not a %s.x.y release", fields[0], fields[1], r.Version)
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

// TestExactInterpreterReachesTheSandbox: a runtime whose interpreter is built finds it at
// /var/lang in a sandbox (read-only), or, without isolation, where $FAASCOPE_LANG_DIR says; one
// whose interpreter is not built finds neither, and only it has the note in its state. The
// bootstrap is the probe, standing in for the runtime's (which runs /var/lang/bin/python3: the
// conformance test test_pinned_runtime_runs_on_its_own_interpreter runs the real one).
func TestExactInterpreterReachesTheSandbox(t *testing.T) {
	if _, err := os.Stat(Interpreters[FamilyPython]); err != nil {
		t.Skip("no " + Interpreters[FamilyPython])
	}
	dir := t.TempDir()
	probe(t, nil) // builds probeBin
	bin, err := os.ReadFile(probeBin)
	if err != nil {
		t.Fatal(err)
	}
	fam := filepath.Join(dir, string(FamilyPython))
	os.MkdirAll(fam, 0o755)
	if err := os.WriteFile(filepath.Join(fam, "bootstrap"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fam, installedMarker), []byte("probe\n"), 0o644)
	lang := fakeLang(t, dir, "python3.12", "CPython 3.12.14 abc", true)
	os.Chmod(dir, 0o755) // the sandbox's user reads it
	tp := startPlatform(t, Config{RuntimesDir: dir})
	code := map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"app.py": []byte("x = 1\n")}))}
	for _, c := range []struct {
		runtime string
		built   bool
	}{{"python3.12", true}, {"python3.13", false}} {
		name := strings.ReplaceAll(c.runtime, ".", "")
		tp.create(name, map[string]any{"Runtime": c.runtime, "Handler": "app.handler", "Code": code})
		_, body := tp.call("GET", "/2015-03-31/functions/"+name, nil, nil)
		var got struct{ Configuration FunctionConfiguration }
		json.Unmarshal(body, &got)
		if note := got.Configuration.StateReason; (note == "") != c.built {
			t.Errorf("%s (built %v): StateReason %q", c.runtime, c.built, note)
		}
		if isolation() == "namespaces" {
			res, _ := tp.invokeDirect(InvokeRequest{Name: name, Payload: []byte(`{"op":"mapfile","path":"/var/lang/bin/python3"}`)})
			var out map[string]any
			json.Unmarshal(res.Payload, &out)
			if c.built && out["sum"] != float64('#') {
				t.Errorf("%s: /var/lang/bin/python3 in the sandbox: %s", c.runtime, res.Payload)
			}
			if !c.built && out["sum"] != nil {
				t.Errorf("%s has a /var/lang: %s", c.runtime, res.Payload)
			}
		} else {
			res, _ := tp.invokeDirect(InvokeRequest{Name: name, Payload: []byte(`{"op":"env"}`)})
			want := ""
			if c.built {
				want = lang
			}
			if env := decodeMap(t, res.Payload); env[langDirEnv] != want {
				t.Errorf("%s without isolation: %s=%q, want %q", c.runtime, langDirEnv, env[langDirEnv], want)
			}
		}
	}
}
