package platform

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// recordedDir holds LocalStack's recordings against AWS (tests/conformance/recorded, NOTICE there).
const recordedDir = "../../tests/conformance/recorded/localstack_runtimes"

// recordedErrors are the Runtime errors AWS answered CreateFunction with, by runtime name.
func recordedErrors(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordedDir, "test_lambda_api.snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var snap map[string]struct {
		Content map[string]json.RawMessage `json:"recorded-content"`
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	param := regexp.MustCompile(`\[([^\]]+)\]$`)
	for test, v := range snap {
		for key, raw := range v.Content {
			var rec struct {
				Error map[string]string `json:"Error"`
			}
			if json.Unmarshal(raw, &rec) != nil || rec.Error == nil {
				continue
			}
			name := ""
			switch key {
			case "invalid_runtime_exc":
				name = "non-existent-runtime"
			case "uppercase_runtime_exc":
				name = "PYTHON3.9"
			default:
				if m := param.FindStringSubmatch(test); m != nil {
					name = m[1]
				}
			}
			out[name] = rec.Error
		}
	}
	if len(out) < 8 {
		t.Fatalf("only %d recorded runtime errors in %s", len(out), recordedDir)
	}
	return out
}

// TestRuntimeRefusalsAreAWSsRecordedAnswers: an unknown runtime and a deprecated one get AWS's
// own code and message, as recorded.
func TestRuntimeRefusalsAreAWSsRecordedAnswers(t *testing.T) {
	for name, want := range recordedErrors(t) {
		err := CheckRuntime(name)
		var ip *invalidParameterError
		if !errors.As(err, &ip) {
			t.Errorf("%s: %v, want InvalidParameterValueException", name, err)
			continue
		}
		if want["Code"] != "InvalidParameterValueException" || ip.Error() != want["Message"] {
			t.Errorf("%s:\n got %q\nwant %s %q", name, ip.Error(), want["Code"], want["Message"])
		}
	}
}

// TestRuntimeTable: what the platform runs is accepted; what AWS runs but the platform does not
// (java, dotnet, ruby, and the python/nodejs versions left out) is refused with the same shape,
// naming what it does run; the table's names are all in AWS's set.
func TestRuntimeTable(t *testing.T) {
	aws := strings.Split(strings.Trim(awsRuntimeEnum, "[]"), ", ")
	for _, r := range Runtimes {
		if err := CheckRuntime(r.Name); err != nil {
			t.Errorf("%s refused: %v", r.Name, err)
		}
		found := false
		for _, a := range aws {
			found = found || a == r.Name
		}
		if !found {
			t.Errorf("%s is not one of AWS's runtimes %s", r.Name, awsRuntimeEnum)
		}
		if (r.Family == FamilyProvided) != (r.Version == "") {
			t.Errorf("%s: family %s with version %q", r.Name, r.Family, r.Version)
		}
	}
	for _, name := range []string{"java21", "java8.al2", "dotnet8", "ruby3.3", "nodejs16.x", "nodejs24.x"} {
		err := CheckRuntime(name)
		var ip *invalidParameterError
		if !errors.As(err, &ip) || !strings.Contains(ip.Error(), "not offered by this local platform") ||
			!strings.Contains(ip.Error(), "python3.12") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestManagedRuntimeNeedsItsClientInstalled: a platform without the runtime's directory (no
// --runtimes-dir, or setup not run) refuses python3.12 at create, saying what is missing,
// instead of accepting a function every invocation of which would fail.
func TestManagedRuntimeNeedsItsClientInstalled(t *testing.T) {
	p := &Platform{}
	if err := p.CheckRuntime("python3.12"); err == nil || !strings.Contains(err.Error(), "--runtimes-dir") {
		t.Errorf("no runtimes dir: %v", err)
	}
	p.cfg.RuntimesDir = t.TempDir()
	if err := p.CheckRuntime("nodejs20.x"); err == nil || !strings.Contains(err.Error(), "setup.sh") {
		t.Errorf("empty runtimes dir: %v", err)
	}
	if err := p.CheckRuntime("provided.al2023"); err != nil {
		t.Errorf("provided.al2023 needs nothing installed: %v", err)
	}
}

// TestBootstrapsExecTheTablesInterpreters: the committed bootstraps run the interpreter the
// table names (the note in StateReason names it too), with and without a wrapper script.
func TestBootstrapsExecTheTablesInterpreters(t *testing.T) {
	for fam, bin := range Interpreters {
		b, err := os.ReadFile(filepath.Join("../../src/faascope/_runtimes", string(fam), "bootstrap"))
		if err != nil {
			t.Fatal(err)
		}
		var execs []string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "exec" {
				execs = append(execs, line)
			}
		}
		if len(execs) != 2 {
			t.Errorf("%s bootstrap: want two exec lines (with and without AWS_LAMBDA_EXEC_WRAPPER), have %q", fam, execs)
		}
		// Each runs $interp: the exact interpreter's (interpreters.go) where there is one, else the table's.
		for _, want := range []string{"interp=" + bin + "\n", `"${` + langDirEnv + `:-` + sandboxLangDir + `}/bin/` + langBuilds[fam].program + `"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s bootstrap does not say %s", fam, want)
			}
		}
		bin = `"$interp"`
		for _, line := range execs {
			if !strings.Contains(line, " "+bin+" ") {
				t.Errorf("%s bootstrap execs %q, not the table's %s", fam, line, bin)
			}
		}
	}
}

// TestRuntimeNoteNamesBothVersions: a managed runtime whose version the machine's interpreter
// does not have gets a note naming both; provided.* and an equal version get none.
func TestRuntimeNoteNamesBothVersions(t *testing.T) {
	have := InterpreterVersions()[FamilyPython]
	if have == "" {
		t.Skip("no " + Interpreters[FamilyPython])
	}
	for _, r := range Runtimes {
		note := RuntimeNote(r.Name)
		switch {
		case r.Family != FamilyPython:
			continue
		case r.Version == have:
			if note != "" {
				t.Errorf("%s on Python %s: note %q", r.Name, have, note)
			}
		case !strings.Contains(note, "Python "+have) || !strings.Contains(note, "Python "+r.Version):
			t.Errorf("%s on Python %s: note %q", r.Name, have, note)
		}
	}
	if RuntimeNote("provided.al2023") != "" {
		t.Error("provided.al2023 has a note")
	}
}

// TestCreateRefusesImagesAndUnofferedRuntimes goes through the API: the refusal is a 400
// InvalidParameterValueException, before any code is read.
func TestCreateRefusesImagesAndUnofferedRuntimes(t *testing.T) {
	tp := startPlatform(t, Config{})
	for _, req := range []map[string]any{
		{"FunctionName": "img", "PackageType": "Image", "Role": "arn:aws:iam::000000000000:role/x", "Code": map[string]string{"ImageUri": "x"}},
		{"FunctionName": "java", "Runtime": "java21", "Role": "arn:aws:iam::000000000000:role/x", "Handler": "a::b", "Code": map[string]string{"ZipFile": "UEs="}},
		{"FunctionName": "py37", "Runtime": "python3.7", "Role": "arn:aws:iam::000000000000:role/x", "Handler": "a.b", "Code": map[string]string{"ZipFile": "UEs="}},
	} {
		resp, body := tp.call("POST", "/2015-03-31/functions", req, nil)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("X-Amzn-Errortype") != "InvalidParameterValueException" {
			t.Errorf("%v: %d %s %s", req["FunctionName"], resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), body)
		}
	}
}

// TestManagedRuntimeFromItsOwnMount runs a python3.12 function whose runtime directory is on a
// file system of its own (a tmpfs here; /home or a second disk on a user's machine), through the
// spare sandboxes made before it was asked for: /var/runtime is that directory, the bootstrap
// there runs (a probe standing in for awslambdaric), with the managed runtime's environment.
// Spares keep only the mounts sandboxes are built from (sparemounts.go): without the runtimes'
// directory among them, the bootstrap was not found and the runtime exited with status 127.
func TestManagedRuntimeFromItsOwnMount(t *testing.T) {
	needSandboxes(t)
	if _, err := os.Stat(Interpreters[FamilyPython]); err != nil {
		t.Skip("no " + Interpreters[FamilyPython])
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	probe(t, nil) // builds probeBin
	bin, err := os.ReadFile(probeBin)
	if err != nil {
		t.Fatal(err)
	}
	fam := filepath.Join(dir, string(FamilyPython))
	if err := os.MkdirAll(fam, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fam, "bootstrap"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fam, installedMarker), []byte("probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tp := startPlatform(t, Config{RuntimesDir: dir})
	tp.create("py", map[string]any{"Runtime": "python3.12", "Handler": "app.handler",
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"app.py": []byte("x = 1\n")}))}})
	res, _ := tp.invokeDirect(InvokeRequest{Name: "py", Payload: []byte(`{"op":"env"}`)})
	env := decodeMap(t, res.Payload)
	want := map[string]string{
		"AWS_EXECUTION_ENV": "AWS_Lambda_python3.12", "PYTHONPATH": "/var/runtime", "LC_CTYPE": "C.UTF-8",
		"LAMBDA_RUNTIME_DIR": "/var/runtime", "LAMBDA_TASK_ROOT": "/var/task", "_HANDLER": "app.handler",
		"PATH":            "/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LD_LIBRARY_PATH": "/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
}
