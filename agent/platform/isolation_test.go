package platform

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Isolation between functions (issue #14): each test deploys testdata/hostile, a custom
// runtime that does what a hostile function would, and checks what the sandbox let it do.

var (
	hostileOnce sync.Once
	hostileZip  []byte
	hostileErr  error
)

func hostile(t *testing.T) []byte {
	t.Helper()
	hostileOnce.Do(func() {
		dir, err := os.MkdirTemp("", "faascope-hostile")
		if err != nil {
			hostileErr = err
			return
		}
		bin := filepath.Join(dir, "bootstrap")
		build := exec.Command("go", "build", "-o", bin, "./testdata/hostile")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			hostileErr = fmt.Errorf("build hostile: %v\n%s", err, out)
			return
		}
		hostileZip = zipOf(map[string]string{"bootstrap": bin}, nil)
		os.RemoveAll(dir)
	})
	if hostileErr != nil {
		t.Fatal(hostileErr)
	}
	return hostileZip
}

func (tp *testPlatform) createHostile(name string, memoryMB int) {
	tp.t.Helper()
	tp.create(name, map[string]any{"MemorySize": memoryMB,
		"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(hostile(tp.t))}})
}

// ask invokes a hostile function with one operation and decodes its answer.
func (tp *testPlatform) ask(name string, req map[string]any) map[string]any {
	tp.t.Helper()
	b, _ := json.Marshal(req)
	resp, _, body := tp.invoke(name, string(b))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Amz-Function-Error") != "" {
		tp.t.Fatalf("%s %v: %d %s", name, req["op"], resp.StatusCode, body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		tp.t.Fatalf("%s %v: %v: %s", name, req["op"], err, body)
	}
	return out
}

func TestSandboxesHaveTheirOwnKeyringsAndUserLimits(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createHostile("ka", 256)
	tp.createHostile("kb", 256)
	a, b := tp.ask("ka", map[string]any{"op": "id"}), tp.ask("kb", map[string]any{"op": "id"})
	if a["uid"] == b["uid"] {
		t.Errorf("two sandboxes share host uid %v", a["uid"])
	}
	// Either the policy refuses the key outright, or it lands where B cannot find it.
	desc := "faascope-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	added := tp.ask("ka", map[string]any{"op": "addkey", "desc": desc})
	found := tp.ask("kb", map[string]any{"op": "findkey", "desc": desc})
	if found["found"] == true {
		t.Errorf("a key added in sandbox A (%v) was found from sandbox B", added)
	}
	// A takes every inotify instance its user may have; B must still get one.
	hog := tp.ask("ka", map[string]any{"op": "inotify-hog"})
	t.Logf("sandbox A took %v inotify instances (%v)", hog["count"], hog["err"])
	if got := tp.ask("kb", map[string]any{"op": "inotify"}); got["err"] != "ok" {
		t.Errorf("after sandbox A took its inotify instances, B's inotify_init1: %v", got["err"])
	}
}

func TestSandboxForbidsNamespacesMountsKeyringsAndPtrace(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createHostile("evil", 256)
	r := tp.ask("evil", map[string]any{"op": "syscalls"})
	calls, _ := r["calls"].(map[string]any)
	names := make([]string, 0, len(calls))
	for k := range calls {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if calls[k] != "EPERM" {
			t.Errorf("%s inside a sandbox: %v, want EPERM", k, calls[k])
		}
	}
	if r["CapBnd"] != "0000000000000000" {
		t.Errorf("capability bounding set %v, want empty", r["CapBnd"])
	}
	if r["Seccomp"] != "2" {
		t.Errorf("seccomp mode %v, want 2 (filter)", r["Seccomp"])
	}
	// socket(2) is filtered on its family (calls["socket_vsock"] above): the others still work.
	for _, k := range []string{"socket_inet", "socket_unix"} {
		if r[k] != "ok" {
			t.Errorf("%s inside a sandbox: %v, want ok", k, r[k])
		}
	}
	if out, _ := r["unshare_cmd"].(string); strings.HasPrefix(out, "0 ") {
		t.Errorf("unshare -Urm gave uid 0 in a nested namespace: %s", out)
	}
	t.Logf("%v; unshare -Urm: %v", calls, r["unshare_cmd"])
}

func cpuacctUsage(t *testing.T, tp *testPlatform, function string) int64 {
	t.Helper()
	for _, in := range tp.Instances() {
		if in.Function == function {
			b, err := os.ReadFile(filepath.Join(cgroupRoot, "cpuacct", tp.cgroupDir, in.ID, "cpuacct.usage"))
			if err != nil {
				t.Errorf("sandbox CPU use unknown: %v", err)
				return 0
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			return n
		}
	}
	t.Fatalf("no instance of %s", function)
	return 0
}

func TestIdleSandboxIsFrozen(t *testing.T) {
	needSandboxes(t)
	if CgroupVersion() != 1 {
		t.Skip("the freezer test reads cgroup v1 cpuacct")
	}
	tp := startPlatform(t, Config{})
	tp.createHostile("bg", 3538) // 2 vCPU: its spinners could take both cores
	// Sibling cgroups get equal CPU weight, so only a victim that wants more than its share of
	// the host (two threads on a 2-core machine) is slowed by another group's spinners.
	tp.createHostile("victim", 3538)
	spin := func() float64 {
		r := tp.ask("victim", map[string]any{"op": "spin", "n": 150_000_000, "threads": 2})
		return r["elapsed_s"].(float64)
	}
	spin() // cold start out of the way
	var clean, after []float64
	for i := 0; i < 3; i++ {
		clean = append(clean, spin())
	}
	// bg leaves two CPU spinners behind and returns.
	tp.ask("bg", map[string]any{"op": "spawn-spinner", "n": 2})
	time.Sleep(300 * time.Millisecond)
	u0 := cpuacctUsage(t, tp, "bg")
	for i := 0; i < 3; i++ {
		after = append(after, spin())
	}
	time.Sleep(500 * time.Millisecond)
	grew := time.Duration(cpuacctUsage(t, tp, "bg") - u0)
	// Minima: other load on the machine only ever slows a run, and unevenly between the two
	// phases (issue #29: medians went past 1.25 on a loaded machine); spinners left running would
	// slow every run alike, the fastest too (1.9-2.1x before idle sandboxes were frozen).
	ratio := slices.Min(after) / slices.Min(clean)
	t.Logf("victim spin clean %v, with bg idle %v (ratio %.2f); bg used %s of CPU while idle", clean, after, ratio, grew)
	if ratio > 1.25 {
		t.Errorf("an idle function's leftover spinners slowed another function's invocation %.2fx", ratio)
	}
	if grew > 50*time.Millisecond {
		t.Errorf("an idle sandbox used %s of CPU between invocations", grew)
	}
	// The spinners are still there: the next invocation of bg thaws them and returns normally.
	tp.ask("bg", map[string]any{"op": "noop"})
}

func TestSandboxHasNoShmAndAMinimalEtc(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createHostile("look", 256)
	paths := []string{"/dev/shm", "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/machine-id",
		"/etc/ssh", "/etc/passwd", "/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf"}
	r := tp.ask("look", map[string]any{"op": "stat", "paths": paths})
	exists, _ := r["exists"].(map[string]any)
	for _, p := range paths[:6] {
		if exists[p] == true {
			t.Errorf("%s is visible in the sandbox", p)
		}
	}
	for _, p := range paths[6:] {
		if exists[p] != true {
			t.Errorf("%s is missing in the sandbox", p)
		}
	}
	allowed := map[string]bool{}
	for _, n := range sandboxEtcFiles {
		allowed[strings.SplitN(n, "/", 2)[0]] = true
	}
	etc, _ := r["etc"].([]any)
	for _, e := range etc {
		if !allowed[e.(string)] {
			t.Errorf("/etc/%s from the host is visible in the sandbox", e)
		}
	}
	uid := fmt.Sprint(r["uid"])
	if !strings.Contains(r["passwd"].(string), ":"+uid+":") {
		t.Errorf("/etc/passwd has no entry for the sandbox's uid %s: %q", uid, r["passwd"])
	}
	if r["hostname_lookup"] != true {
		t.Errorf("/etc/hosts has no localhost")
	}
}

func TestSharedDirectoryIsOneIdentityAcrossSandboxes(t *testing.T) {
	needSandboxes(t)
	shared := t.TempDir()
	os.Chmod(shared, 0o1777)
	tp := startPlatform(t, Config{SharedDir: shared})
	tp.createHostile("sa", 256)
	tp.createHostile("sb", 256)
	f := SharedMount + "/one-file"
	if r := tp.ask("sa", map[string]any{"op": "write", "path": f}); r["err"] != "ok" {
		t.Fatalf("A writes %s: %v", f, r["err"])
	}
	// Like an EFS access point, every function is one POSIX identity on the shared file system:
	// B rewrites and removes what A created, even in a sticky directory.
	if r := tp.ask("sb", map[string]any{"op": "write", "path": f}); r["err"] != "ok" {
		t.Errorf("B rewrites A's %s: %v", f, r["err"])
	}
	if r := tp.ask("sb", map[string]any{"op": "unlink", "path": f}); r["err"] != "ok" {
		t.Errorf("B removes A's %s: %v", f, r["err"])
	}
}

func TestStopRemovesThePlatformsCgroups(t *testing.T) {
	needSandboxes(t)
	p, err := New(Config{DataDir: t.TempDir(), DefaultProfile: ProfileLambda, Isolation: isolation()})
	if err != nil {
		t.Fatal(err)
	}
	lim, _ := LimitsFor(ProfileLambda, 128, 512)
	cg, err := NewCgroup(p.cgroupDir, "probe", lim)
	if err != nil {
		t.Fatal(err)
	}
	cg.Remove()
	p.Close()
	for _, c := range []string{"cpu", "memory", "pids", "freezer", "cpuacct"} {
		if _, err := os.Stat(filepath.Join(cgroupRoot, c, p.cgroupDir)); err == nil {
			t.Errorf("%s cgroup %s left behind after stop", c, p.cgroupDir)
		}
	}
}

// TestStopRightAfterDeleteLeavesNoCgroups: `faascope run` deletes its function and stops the
// platform it started at once. A deleted function's idle instance is destroyed in the background,
// and the platform used to exit in the middle of it: every run left that sandbox's groups (cpu,
// cpuacct, memory, pids, freezer) under the platform's, so the platform's own groups stayed too.
func TestStopRightAfterDeleteLeavesNoCgroups(t *testing.T) {
	needSandboxes(t)
	// No spares: the stop has nothing else to do that could give the background destroy time.
	p, err := New(Config{DataDir: t.TempDir(), DefaultProfile: ProfileLambda, Isolation: isolation(),
		SpareSandboxes: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(APIHandler(p))
	defer srv.Close()
	tp := &testPlatform{p, srv.URL, t}
	tp.create("gone", nil)
	if _, r, body := tp.invoke("gone", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("invoke: %s", body)
	}
	if resp, body := tp.call("DELETE", "/2015-03-31/functions/gone", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	p.Close()
	dirs := parentDirs(p.cgroupDir)
	if CgroupVersion() == 1 {
		dirs = append(dirs, blkioV1Dir(p.cgroupDir))
	}
	for _, d := range dirs {
		if left, err := os.ReadDir(d); err == nil {
			t.Errorf("%s left behind after the stop (%d entries)", d, len(left))
		}
	}
}

// /proc shows the whole kernel, which sandboxes share here: each masked path (procmask.go) must
// read as nothing inside a sandbox, while the process's own /proc stays.
func TestSandboxProcHidesTheHostsKeysLocksAndKernel(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createHostile("peek", 256)
	var paths []string
	for _, name := range maskedProcPaths {
		if _, err := os.Lstat("/proc/" + name); err == nil {
			paths = append(paths, "/proc/"+name)
		}
	}
	// What the issue saw, with something of the host's in it here (the platform itself holds
	// its uid locks, root has keys, the kernel has symbols): on the host these are not empty.
	for _, p := range []string{"/proc/key-users", "/proc/locks", "/proc/kallsyms"} {
		if b, err := os.ReadFile(p); err != nil || len(b) == 0 {
			t.Fatalf("%s on the host: %d bytes, %v (the test needs something to hide)", p, len(b), err)
		}
	}
	controls := []string{"/proc/self/status", "/proc/meminfo"}
	r := tp.ask("peek", map[string]any{"op": "read", "paths": append(paths, controls...)})
	got, _ := r["read"].(map[string]any)
	for _, p := range paths {
		g, _ := got[p].(map[string]any)
		if g == nil || g["err"] != nil || (g["bytes"] != nil && g["bytes"] != 0.0) || (g["entries"] != nil && g["entries"] != 0.0) {
			t.Errorf("%s inside a sandbox: %v, want empty", p, g)
		}
	}
	for _, p := range controls {
		if g, _ := got[p].(map[string]any); g == nil || g["bytes"] == nil || g["bytes"] == 0.0 {
			t.Errorf("%s inside a sandbox: %v, want its contents", p, g)
		}
	}
	t.Logf("masked: %v", got)
}
