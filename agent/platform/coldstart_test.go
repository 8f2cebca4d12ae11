package platform

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// storeEntries lists the code store's complete entries.
func storeEntries(p *Platform) []string {
	var out []string
	entries, _ := os.ReadDir(p.code.dir)
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && p.code.complete(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// A package is unpacked once, at CreateFunction, into the store; every instance mounts that
// directory read-only at /var/task; a new code version is a new entry; an entry nothing refers
// to is collected once no instance runs it; a restarted platform reuses the entries.
func TestCodeStoreSharedReadOnlyAndCollected(t *testing.T) {
	needSandboxes(t)
	tp := startPlatform(t, Config{})
	tp.createHostile("h", 256)
	entries := storeEntries(tp.Platform)
	if len(entries) != 1 || !strings.HasPrefix(entries[0], "task-") {
		t.Fatalf("after CreateFunction the store holds %v, want one task- entry", entries)
	}
	p := tp.Platform
	p.mu.Lock()
	want := codeEntryName(p.functions[key("h")].Config.CodeSha256)
	p.mu.Unlock()
	if entries[0] != want {
		t.Fatalf("entry %s is not named by the package's content (%s)", entries[0], want)
	}

	// Two instances at once: both mount the one entry; neither can write it.
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tp.invoke("h", `{"op":"spin","n":300000000}`)
		}()
	}
	wg.Wait()
	if n := len(p.Instances()); n != 2 {
		t.Fatalf("%d instances, want 2", n)
	}
	for _, info := range p.Instances() {
		mi, err := os.ReadFile("/proc/" + strconv.Itoa(info.Pid) + "/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, line := range strings.Split(string(mi), "\n") {
			f := strings.Fields(line)
			if len(f) > 5 && f[4] == "/var/task" {
				found = true
				if !strings.Contains(f[3], want) || !strings.HasPrefix(f[5], "ro") {
					t.Fatalf("%s: /var/task is %q (%s), want the store's %s read-only", info.ID, f[3], f[5], want)
				}
			}
		}
		if !found {
			t.Fatalf("%s has no /var/task mount", info.ID)
		}
	}
	if r := tp.ask("h", map[string]any{"op": "write", "path": "/var/task/x"}); r["err"] == "" {
		t.Fatal("a function wrote into its package's directory")
	}
	if _, err := os.Stat(filepath.Join(p.code.dir, want, "x")); err == nil {
		t.Fatal("the store's entry was modified")
	}

	// A new code version: a new entry; the old one goes once its instances are gone.
	resp, body := tp.call("PUT", "/2015-03-31/functions/h/code", map[string]any{
		"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("UpdateFunctionCode: %d %s", resp.StatusCode, body)
	}
	waitReady(t, p, "h")
	// The new version has an entry of its own (the old one may already be gone: the update
	// retires the idle instances that used it, asynchronously).
	newEntry := false
	for _, e := range storeEntries(p) {
		newEntry = newEntry || e != want
	}
	if !newEntry {
		t.Fatalf("after a code update the store holds no new entry: %v", storeEntries(p))
	}
	p.retireFunction(key("h"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.collectCode()
		if e := storeEntries(p); len(e) == 1 && e[0] != want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old entry was not collected: %v", storeEntries(p))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, _, body := tp.invoke("h", `{"workload":{"kind":"noop"}}`); !strings.Contains(string(body), `"ok":true`) {
		t.Fatalf("invoke after the update: %s", body)
	}

	// Restarted: the entry is reused as it is (same inode), not unpacked again.
	now := storeEntries(p)[0]
	fi, _ := os.Stat(filepath.Join(p.code.dir, now, "bootstrap"))
	dir := p.cfg.DataDir
	p.Close()
	p2, err := New(Config{DataDir: dir, DefaultProfile: ProfileLambda, Isolation: isolation()})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	fi2, err := os.Stat(filepath.Join(p2.code.dir, now, "bootstrap"))
	if err != nil || !os.SameFile(fi, fi2) {
		t.Fatalf("the entry was not kept across a restart: %v", err)
	}

	// Deleted: nothing refers to it any more.
	if err := p2.DeleteFunction(ref("h")); err != nil {
		t.Fatal(err)
	}
	p2.collectCode()
	if e := storeEntries(p2); len(e) != 0 {
		t.Fatalf("after DeleteFunction the store still holds %v", e)
	}
}

// A profile's modelled cold-start cost is added explicitly, as a step of the set-up, and never
// counted in the runtime's init.
func TestModelledColdStartIsExplicit(t *testing.T) {
	cal, err := parseCalibration([]byte(`{"profiles": {"lambda": {"table": "platform-lambda", "version": "test",
		"entries": {"cold_start_fixed": {"value": 80, "unit": "ms", "source": "test", "role": "assumed"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tp := startPlatform(t, Config{Calibration: cal})
	tp.create("m", nil)
	resp, r, body := tp.invoke("m", `{"workload":{"kind":"noop"}}`)
	if !r.OK || !r.Cold {
		t.Fatalf("cold invoke: %s", body)
	}
	if got := resp.Header.Get("X-Faascope-Modelled-Ms"); got != "80.000" {
		t.Fatalf("X-Faascope-Modelled-Ms = %q", got)
	}
	setup, _ := strconv.ParseFloat(resp.Header.Get("X-Faascope-Setup-Ms"), 64)
	initMs, _ := strconv.ParseFloat(resp.Header.Get("X-Faascope-Init-Ms"), 64)
	if setup < 80 || initMs >= 80 {
		t.Fatalf("setup %.3f ms, init %.3f ms: the modelled 80 ms belongs to the set-up", setup, initMs)
	}
	if s := resp.Header.Get("X-Faascope-Setup-Steps"); !strings.Contains(s, "modelled=80.000") {
		t.Fatalf("steps %q lack the modelled delay", s)
	}
	resp, _, _ = tp.invoke("m", `{"workload":{"kind":"noop"}}`)
	if resp.Header.Get("X-Faascope-Modelled-Ms") != "" {
		t.Fatal("a warm invocation paid the modelled cold start")
	}
}

// Cold starts with and without spares, and on an empty pool (a burst), all run; each step of the
// set-up is reported.
func TestColdStartStepsWithAndWithoutSpares(t *testing.T) {
	needSandboxes(t)
	for _, spares := range []int{-1, 1} {
		tp := startPlatform(t, Config{SpareSandboxes: spares, KeepAlive: time.Minute})
		tp.create("c", map[string]any{"Tags": map[string]string{TagKeepAlive: "0"}})
		for i := 0; i < 3; i++ {
			resp, r, body := tp.invoke("c", `{"workload":{"kind":"noop"}}`)
			if !r.OK || !r.Cold {
				t.Fatalf("spares %d: cold invoke %d: %s", spares, i, body)
			}
			steps := resp.Header.Get("X-Faascope-Setup-Steps")
			for _, s := range []string{"code=", "claim=", "limits=", "mount_system_code=", "seccomp="} {
				if !strings.Contains(steps, s) {
					t.Fatalf("spares %d: steps %q lack %s", spares, steps, s)
				}
			}
			if spares < 0 && (strings.Contains(steps, "spare=") || !strings.Contains(steps, "clone_exec=")) ||
				!strings.Contains(steps, "spare=") && !strings.Contains(steps, "clone_exec=") {
				t.Fatalf("spares %d: steps %q", spares, steps)
			}
			time.Sleep(400 * time.Millisecond) // keep-alive 0: the reaper retires it; spares refill
		}
	}
}
