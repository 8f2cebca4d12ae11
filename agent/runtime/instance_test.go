package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeCgroups builds a /proc/self/cgroup and a /sys/fs/cgroup tree from path -> content.
func fakeCgroups(t *testing.T, procSelf string, files map[string]string) cgroups {
	t.Helper()
	dir := t.TempDir()
	c := cgroups{procSelf: filepath.Join(dir, "cgroup"), root: filepath.Join(dir, "sys")}
	if err := os.WriteFile(c.procSelf, []byte(procSelf), 0o644); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(c.root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestCgroups(t *testing.T) {
	const v1 = "9:name=systemd:/\n4:memory:/sandbox/abc\n2:cpu,cpuacct:/sandbox/abc\n0::/\n"
	cases := []struct {
		name     string
		procSelf string
		files    map[string]string
		sandbox  string
		quota    float64 // 0: null
		memory   int64   // 0: null
	}{
		{"v1, sandbox dirs bind-mounted at the controller roots (local platform)", v1, map[string]string{
			"cpu/cpu.cfs_quota_us": "50000", "cpu/cpu.cfs_period_us": "100000",
			"memory/memory.limit_in_bytes": "134217728",
		}, "/sandbox/abc", 0.5, 134217728},
		{"v1, whole hierarchy visible (plain host)", v1, map[string]string{
			"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000",
			"cpu/sandbox/abc/cpu.cfs_quota_us": "28944", "cpu/sandbox/abc/cpu.cfs_period_us": "100000",
			"memory/memory.limit_in_bytes":             "9223372036854771712",
			"memory/sandbox/abc/memory.limit_in_bytes": "268435456",
		}, "/sandbox/abc", 0.28944, 268435456},
		{"v1 unlimited", v1, map[string]string{
			"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000",
			"memory/memory.limit_in_bytes": "9223372036854771712",
		}, "/sandbox/abc", 0, 0},
		{"v1 cpu only", "3:cpu:/x\n", map[string]string{}, "/x", 0, 0},
		{"v2", "0::/user.slice/fn\n", map[string]string{
			"user.slice/fn/cpu.max": "200000 100000", "user.slice/fn/memory.max": "max",
		}, "/user.slice/fn", 2, 0},
		{"v2 namespaced", "0::/\n", map[string]string{"cpu.max": "max 100000", "memory.max": "536870912"}, "/", 0, 536870912},
		{"nothing readable", "", map[string]string{}, "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cg := fakeCgroups(t, c.procSelf, c.files)
			if got := cg.sandbox(); got != c.sandbox {
				t.Errorf("sandbox %q, want %q", got, c.sandbox)
			}
			q := cg.cpuQuota()
			if (q == nil) != (c.quota == 0) || (q != nil && *q != c.quota) {
				t.Errorf("cpu quota %v, want %v", deref(q), c.quota)
			}
			m := cg.memoryLimit()
			if (m == nil) != (c.memory == 0) || (m != nil && *m != c.memory) {
				t.Errorf("memory limit %v, want %v", deref(m), c.memory)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
