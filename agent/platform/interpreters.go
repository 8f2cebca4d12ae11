package platform

import (
	"os"
	"path/filepath"
	"strings"
)

// Exact interpreters. The machine has one CPython and one Node (Interpreters); a runtime whose
// version they are not runs under them, with a note saying so (RuntimeNote).
// scripts/interpreters.sh builds the CPython, or fetches the Node, of each runtime pinned in
// scripts/interpreters.txt (their one source) into <RuntimesDir>/lang/<runtime>, an install
// prefix whose stamp (.installed) reads "CPython <version> <sha256>" or "Node <version> <sha256>".
// Where it is there, the sandbox has it read-only at /var/lang, where Lambda keeps a managed
// runtime's interpreter (its PATH and LD_LIBRARY_PATH name /var/lang first: runtimeEnv), the
// bootstrap runs /var/lang/bin/python3 or /var/lang/bin/node, and there is no note.

const (
	langDirName    = "lang"      // under RuntimesDir
	sandboxLangDir = "/var/lang" // where the sandbox has it (sandboxinit.go)
	langStamp      = ".installed"
	// langDirEnv tells a bootstrap run without isolation (sandbox.go: startPlain), where nothing
	// is mounted, where the interpreter is instead of /var/lang.
	langDirEnv = "FAASCOPE_LANG_DIR"
)

// langBuilds are what a family's stamp names and the program its bootstrap runs.
var langBuilds = map[RuntimeFamily]struct{ kind, program string }{
	FamilyPython: {"CPython", "python3"},
	FamilyNode:   {"Node", "node"},
}

// exactInterpreterDir is the install prefix of runtime r's own interpreter under runtimesDir, or
// "" when none is built there (or what is there is not r's version: a stale build).
func exactInterpreterDir(runtimesDir string, r Runtime) string {
	build, ok := langBuilds[r.Family]
	if !ok || runtimesDir == "" {
		return ""
	}
	dir := filepath.Join(runtimesDir, langDirName, r.Name)
	b, err := os.ReadFile(filepath.Join(dir, langStamp))
	f := strings.Fields(string(b))
	if err != nil || len(f) < 2 || f[0] != build.kind || !strings.HasPrefix(f[1]+".", r.Version+".") {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin", build.program)); err != nil || fi.Mode()&0o111 == 0 {
		return ""
	}
	return dir
}

// langDirOf is exactInterpreterDir of a runtime's name on this platform.
func (p *Platform) langDirOf(name string) string {
	r, ok := LookupRuntime(name)
	if !ok {
		return ""
	}
	return exactInterpreterDir(p.cfg.RuntimesDir, r)
}

// runtimeNote is RuntimeNote where the runtime has no exact interpreter here, "" where it has.
func (p *Platform) runtimeNote(name string) string {
	if p.langDirOf(name) != "" {
		return ""
	}
	return RuntimeNote(name)
}
