package platform

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// agentLayers is which of the module's packages each library package may import (the Go side
// of tests/test_structure.py). The core platform imports only a leaf (cgroupfile, a kernel
// file format the runtime reads too): its Lambda API (lambdaapi) imports it, never the other
// way round, so a handler cannot reach the core's state and only translates. Commands
// (cmd/...) may import any library package; nothing imports a command.
var agentLayers = map[string][]string{
	"cgroupfile":         {},
	"workloads":          {},
	"runtime":            {"workloads", "cgroupfile"},
	"shaper":             {},
	"platform":           {"cgroupfile"},
	"platform/lambdaapi": {"platform"},
}

// TestPackageBoundaries checks the module's imports, as the go tool resolves them (test files
// aside), against agentLayers; a new library package must be placed there.
func TestPackageBoundaries(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = ".." // the module's root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/faascope/faascope/agent/"
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			t.Fatalf("go list: %q is not in the module %s", fields[0], module)
		}
		seen[pkg] = true
		command := strings.HasPrefix(pkg, "cmd/")
		allowed, placed := agentLayers[pkg]
		if !command && !placed {
			t.Errorf("%s is in no layer of agentLayers: place it", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, internal := strings.CutPrefix(imp, module)
			switch {
			case !internal:
			case strings.HasPrefix(dep, "cmd/"):
				t.Errorf("%s imports the command %s", pkg, dep)
			case !command && !slices.Contains(allowed, dep):
				t.Errorf("%s imports %s; agentLayers allows it %v", pkg, dep, allowed)
			}
		}
	}
	for pkg := range agentLayers {
		if !seen[pkg] {
			t.Errorf("agentLayers names %s, which go list did not list", pkg)
		}
	}
	if !seen["cmd/faascope-platform"] {
		t.Errorf("go list did not list the commands")
	}
}
