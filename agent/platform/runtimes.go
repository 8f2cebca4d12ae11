package platform

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The runtimes the platform runs: this table is the one list (the API's validation, the
// sandbox's /var/runtime and environment, docs/platform.md's "Managed runtimes", and faascope's
// Python side through `faascope-platform --list-runtimes` all come from it).
//
// A custom runtime (provided.*) brings its own bootstrap. A managed runtime (python*, nodejs*)
// is AWS's own runtime interface client (awslambdaric from PyPI, aws-lambda-ric from npm),
// installed by scripts/setup.sh into <RuntimesDir>/<family> beside a committed bootstrap, and
// mounted read-only at /var/runtime, where Lambda keeps its runtime too; the interpreter is the
// runtime's own where scripts/interpreters.sh installed it (interpreters.go: at /var/lang), else
// the machine's (the sandbox sees the host's /usr read-only): one CPython and one Node, whatever
// minor version the function asked for. Where they differ the function's state and its log say
// so (RuntimeNote).

// RuntimeFamily says how a runtime starts: its own bootstrap, or the platform's for a language.
type RuntimeFamily string

const (
	FamilyProvided RuntimeFamily = "provided"
	FamilyPython   RuntimeFamily = "python"
	FamilyNode     RuntimeFamily = "nodejs"
)

// Runtime is one identifier the platform accepts.
type Runtime struct {
	Name    string        `json:"name"`
	Family  RuntimeFamily `json:"family"`
	Version string        `json:"version"` // the language version it names ("3.12", "20"); "" for provided.*
}

// Runtimes is the table, in the order docs list them.
var Runtimes = []Runtime{
	{"provided.al2023", FamilyProvided, ""},
	{"provided.al2", FamilyProvided, ""},
	// python3.8: deprecated on AWS (2024-10-14) but still accepted there for create and update
	// (it is in the Runtime enum AWS printed in the recording, and test_function_revisions_basic
	// updated a function to it); it runs under the machine's interpreter, which its state says.
	{"python3.8", FamilyPython, "3.8"},
	{"python3.9", FamilyPython, "3.9"},
	{"python3.10", FamilyPython, "3.10"},
	{"python3.11", FamilyPython, "3.11"},
	{"python3.12", FamilyPython, "3.12"},
	{"python3.13", FamilyPython, "3.13"},
	{"python3.14", FamilyPython, "3.14"},
	{"nodejs18.x", FamilyNode, "18"},
	{"nodejs20.x", FamilyNode, "20"},
	{"nodejs22.x", FamilyNode, "22"},
}

// Interpreters are the programs the committed bootstraps (src/faascope/_runtimes/<family>/
// bootstrap) exec; TestBootstrapsExecTheTablesInterpreters holds them to it.
var Interpreters = map[RuntimeFamily]string{FamilyPython: "/usr/bin/python3", FamilyNode: "/usr/bin/node"}

// awsRuntimeEnum is the value set CreateFunction's Runtime must be in on AWS, in the order AWS
// prints it (LocalStack's recording against AWS, test_lambda_api.snapshot.json,
// test_create_lambda_exceptions "invalid_runtime_exc").
const awsRuntimeEnum = "[nodejs20.x, python3.14, provided.al2023, python3.12, python3.13, nodejs24.x, nodejs22.x, " +
	"java25, python3.10, python3.11, java21, ruby3.3, ruby3.4, ruby3.2, python3.8, python3.9, java17, nodejs16.x, " +
	"dotnet10, dotnet8, java11, dotnet6, nodejs18.x, provided.al2, java8.al2]"

// deprecatedRuntimes are those AWS no longer lets a function be created or updated with
// (TestRuntimeValidation::test_create_deprecated_function_runtime_with_validation_enabled in the
// same recording; the dates in LocalStack's runtimes.py).
var deprecatedRuntimes = map[string]bool{
	"java8": true, "go1.x": true, "provided": true, "ruby2.7": true, "nodejs14.x": true,
	"python3.7": true, "dotnetcore3.1": true, "nodejs12.x": true,
	// Older still: blocked long before the recording, named here so they get the same answer.
	"python3.6": true, "python2.7": true, "nodejs10.x": true, "nodejs8.10": true, "dotnetcore2.1": true,
	"ruby2.5": true,
}

// LookupRuntime finds a runtime of the table.
func LookupRuntime(name string) (Runtime, bool) {
	for _, r := range Runtimes {
		if r.Name == name {
			return r, true
		}
	}
	return Runtime{}, false
}

// CheckRuntime refuses what AWS refuses, with AWS's messages, and what AWS accepts but this
// platform does not run (java*, dotnet*, ruby*, …), with the same error's shape.
func CheckRuntime(name string) error {
	if _, ok := LookupRuntime(name); ok {
		return nil
	}
	if deprecatedRuntimes[name] {
		return errInvalid("The runtime parameter of %s is no longer supported for creating or updating AWS Lambda "+
			"functions. We recommend you use a supported runtime while creating or updating functions.", name)
	}
	if !slices.Contains(strings.Split(strings.Trim(awsRuntimeEnum, "[]"), ", "), name) {
		return errInvalid("Value %s at 'runtime' failed to satisfy constraint: Member must satisfy enum value set: %s or be a valid ARN",
			name, awsRuntimeEnum)
	}
	names := make([]string, len(Runtimes))
	for i, r := range Runtimes {
		names[i] = r.Name
	}
	return errInvalid("The runtime parameter of %s is not offered by this local platform (a Lambda runtime it does not run); "+
		"it runs %s", name, strings.Join(names, ", "))
}

// runtimeDir is the host directory mounted at /var/runtime for a function's runtime ("" for
// provided.*: /var/runtime stays empty, as on Lambda).
func (p *Platform) runtimeDir(r Runtime) string {
	if r.Family == FamilyProvided || p.cfg.RuntimesDir == "" {
		return ""
	}
	return filepath.Join(p.cfg.RuntimesDir, string(r.Family))
}

// runtimeDirOf is runtimeDir of a runtime's name ("" for one not in the table).
func (p *Platform) runtimeDirOf(name string) string {
	r, ok := LookupRuntime(name)
	if !ok {
		return ""
	}
	return p.runtimeDir(r)
}

// CheckRuntime is the package's CheckRuntime, then refuses a managed runtime whose client is not
// installed here: without it every invocation would fail, so the create fails instead, saying
// what to run.
func (p *Platform) CheckRuntime(name string) error {
	if err := CheckRuntime(name); err != nil {
		return err
	}
	r, ok := LookupRuntime(name)
	if !ok || r.Family == FamilyProvided {
		return nil
	}
	dir := p.runtimeDir(r)
	if dir == "" {
		return errInvalid("The runtime parameter of %s is not available: the platform was started without --runtimes-dir "+
			"(faascope passes its own; scripts/setup.sh installs the runtimes)", name)
	}
	for _, f := range []string{"bootstrap", installedMarker} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return errInvalid("The runtime parameter of %s is not available: %s is missing (run scripts/setup.sh)",
				name, filepath.Join(dir, f))
		}
	}
	if _, err := os.Stat(Interpreters[r.Family]); err != nil {
		return errInvalid("The runtime parameter of %s is not available: this machine has no %s", name, Interpreters[r.Family])
	}
	return nil
}

// installedMarker is written by scripts/setup.sh once a family's client is installed.
const installedMarker = ".installed"

var (
	interpreterOnce    sync.Once
	interpreterVersion map[RuntimeFamily]string
)

var versionPattern = regexp.MustCompile(`(\d+)\.(\d+)`)

// InterpreterVersions are the machine's interpreters' versions, as the runtimes' versions name
// them ("3.11", "20"), found once.
func InterpreterVersions() map[RuntimeFamily]string {
	interpreterOnce.Do(func() {
		interpreterVersion = map[RuntimeFamily]string{}
		for fam, bin := range Interpreters {
			out, err := exec.Command(bin, "--version").CombinedOutput()
			m := versionPattern.FindStringSubmatch(string(out))
			if err != nil || m == nil {
				continue
			}
			if fam == FamilyNode {
				interpreterVersion[fam] = m[1] // Lambda names Node by its major version
			} else {
				interpreterVersion[fam] = m[1] + "." + m[2]
			}
		}
	})
	return interpreterVersion
}

// RuntimeNote says where the interpreter differs from the runtime's version ("" when it does
// not, or for provided.*): GetFunction's StateReason of an Active function carries it, and the
// runtime's bootstrap logs the same at init.
func RuntimeNote(name string) string {
	r, ok := LookupRuntime(name)
	if !ok || r.Family == FamilyProvided {
		return ""
	}
	have := InterpreterVersions()[r.Family]
	if have == "" || have == r.Version {
		return ""
	}
	lang := map[RuntimeFamily]string{FamilyPython: "Python", FamilyNode: "Node.js"}[r.Family]
	return fmt.Sprintf("The local platform runs %s under %s %s (%s), not %s %s: this machine has no other.",
		name, lang, have, Interpreters[r.Family], lang, r.Version)
}

// runtimeEnv is what Lambda adds to a function's environment for a managed runtime (LocalStack's
// recording against AWS, test_lambda_common.snapshot.json, test_introspection_invoke), and the
// PATH and LD_LIBRARY_PATH it gives them instead of the OS-only runtime's (env.go).
func runtimeEnv(r Runtime) []string {
	if r.Family == FamilyProvided {
		return nil
	}
	env := []string{
		"PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LD_LIBRARY_PATH=/var/lang/lib:" + libraryPath(sandboxTaskRoot, sandboxRuntimeDir),
	}
	switch r.Family {
	case FamilyPython:
		env = append(env, "PYTHONPATH="+sandboxRuntimeDir, "LC_CTYPE=C.UTF-8")
	case FamilyNode:
		env = append(env, "NODE_PATH=/opt/nodejs/node"+r.Version+"/node_modules:/opt/nodejs/node_modules:"+
			sandboxRuntimeDir+"/node_modules:"+sandboxRuntimeDir+":"+sandboxTaskRoot)
	}
	return env
}
