package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/faascope/faascope/agent/cgroupfile"
)

// Instance identifies the sandbox that served an invocation, so results can be grouped by
// instance and by host (co-location) and checked against the resources the platform promised.
type Instance struct {
	ID               string   `json:"id"`
	StartedAt        string   `json:"started_at"`
	Sandbox          string   `json:"sandbox"`
	BootID           string   `json:"boot_id"`
	CPUQuota         *float64 `json:"cpu_quota"`
	MemoryLimitBytes *int64   `json:"memory_limit_bytes"`
	Hostname         string   `json:"hostname"`
	Arch             string   `json:"arch"`
	NumCPU           int      `json:"num_cpu"`
	Env              Env      `json:"env"`
}

// Env is what the Lambda runtime tells a function about itself (null elsewhere).
type Env struct {
	FunctionName *string `json:"function_name"`
	MemoryMB     *int64  `json:"memory_mb"`
	LogStream    *string `json:"log_stream"`
}

// cgroups reads cgroup v1 or v2 information; the fields are paths so tests can point them at
// fake trees.
type cgroups struct {
	procSelf string // /proc/self/cgroup
	root     string // /sys/fs/cgroup
}

var hostCgroups = cgroups{procSelf: "/proc/self/cgroup", root: "/sys/fs/cgroup"}

func newInstance(now time.Time) (Instance, error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return Instance{}, err
	}
	host, _ := os.Hostname()
	inst := Instance{
		ID:        hex.EncodeToString(id),
		StartedAt: now.UTC().Format(time.RFC3339Nano),
		Sandbox:   hostCgroups.sandbox(),
		BootID:    readTrimmed("/proc/sys/kernel/random/boot_id"),
		Hostname:  host,
		Arch:      goruntime.GOARCH,
		NumCPU:    goruntime.NumCPU(),
		Env: Env{
			FunctionName: envString("AWS_LAMBDA_FUNCTION_NAME"),
			LogStream:    envString("AWS_LAMBDA_LOG_STREAM_NAME"),
		},
	}
	if v, err := strconv.ParseInt(os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), 10, 64); err == nil {
		inst.Env.MemoryMB = &v
	}
	inst.refreshLimits()
	return inst, nil
}

// refreshLimits re-reads the limits at every invocation: they are cheap to read and a platform
// may set them after the process started.
func (i *Instance) refreshLimits() {
	i.CPUQuota = hostCgroups.cpuQuota()
	i.MemoryLimitBytes = hostCgroups.memoryLimit()
}

func envString(name string) *string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return &v
	}
	return nil
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// paths parses /proc/self/cgroup (cgroupfile.Parse); nothing where it cannot be read.
func (c cgroups) paths() (v1 map[string]string, v2 string, hasV2 bool) {
	b, err := os.ReadFile(c.procSelf)
	if err != nil {
		return map[string]string{}, "", false
	}
	return cgroupfile.Parse(b)
}

// sandbox is the cgroup path, which names the container or microVM slot on most platforms.
func (c cgroups) sandbox() string {
	v1, v2, hasV2 := c.paths()
	if p, ok := v1["memory"]; ok {
		return p
	}
	if p, ok := v1["cpu"]; ok {
		return p
	}
	if hasV2 {
		return v2
	}
	return ""
}

// candidates lists where a controller's file may be: under the process's own cgroup path when
// the whole hierarchy is visible (a plain host), else at the controller's root, which is the
// sandbox's own cgroup when the platform bind-mounts it there or a cgroup namespace is in use.
// Own path first: on a plain host the root holds the machine's (unlimited) values.
func (c cgroups) candidates(controller, file string) []string {
	v1, v2, hasV2 := c.paths()
	var out []string
	if p, ok := v1[controller]; ok {
		dir := filepath.Join(c.root, controller)
		if p != "/" && p != "" {
			out = append(out, filepath.Join(dir, p, file))
		}
		out = append(out, filepath.Join(dir, file))
	}
	return append(out, c.v2Candidates(v2, hasV2, controller, file)...)
}

func (c cgroups) v2Candidates(v2 string, hasV2 bool, controller, file string) []string {
	v2file := map[string]string{"cpu": "cpu.max", "memory": "memory.max"}[controller]
	var out []string
	if hasV2 && v2 != "/" && v2 != "" {
		out = append(out, filepath.Join(c.root, v2, v2file))
	}
	return append(out, filepath.Join(c.root, v2file))
}

// cpuQuota is the CPU limit in vCPUs, nil when unlimited or unknown.
func (c cgroups) cpuQuota() *float64 {
	for _, p := range c.candidates("cpu", "cpu.cfs_quota_us") {
		var q, per float64
		var err error
		if strings.HasSuffix(p, "cpu.max") { // v2: "max 100000" or "50000 100000"
			b, rerr := os.ReadFile(p)
			if rerr != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) != 2 {
				continue
			}
			if f[0] == "max" {
				return nil
			}
			q, err = strconv.ParseFloat(f[0], 64)
			if err != nil {
				continue
			}
			per, err = strconv.ParseFloat(f[1], 64)
		} else {
			qs := readTrimmed(p)
			if qs == "" {
				continue
			}
			q, err = strconv.ParseFloat(qs, 64)
			if err != nil {
				continue
			}
			if q < 0 {
				return nil
			}
			per, err = strconv.ParseFloat(readTrimmed(filepath.Join(filepath.Dir(p), "cpu.cfs_period_us")), 64)
		}
		if err != nil || per <= 0 {
			continue
		}
		v := q / per
		return &v
	}
	return nil
}

// memoryLimit is the memory limit in bytes, nil when unlimited or unknown. cgroup v1 spells
// "unlimited" as a huge page-rounded number near 2^63.
func (c cgroups) memoryLimit() *int64 {
	for _, p := range c.candidates("memory", "memory.limit_in_bytes") {
		s := readTrimmed(p)
		if s == "" {
			continue
		}
		if s == "max" {
			return nil
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			continue
		}
		if v >= 1<<62 {
			return nil
		}
		n := int64(v)
		return &n
	}
	return nil
}
