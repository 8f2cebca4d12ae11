package platform

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"time"
)

// The calibrated profiles' figures live in versioned tables (src/faascope/calibration/tables,
// one source); the Python side merges them with a user's override and hands the platform the
// result as one JSON file (faascope-platform --calibration FILE, written by
// faascope.calibration.platform_calibration). This file reads it, by key: a key renamed on one
// side fails TestPackagedCalibrationTables, which reads the packaged tables themselves.
//
// Without a calibration the profiles keep only their resource model (CPU, memory, /tmp size):
// no block I/O limits, no modelled cold start, no shared-file-system budget, and the "lambda"
// net shape is refused (its token bucket is in the table).

// CalibrationEntry is one calibrated figure as the tables carry it.
type CalibrationEntry struct {
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Source string  `json:"source"`
	Role   string  `json:"role"`
}

// CalibrationTable is one profile's table (overrides applied).
type CalibrationTable struct {
	Table      string                      `json:"table"`
	Version    string                      `json:"version"`
	Overridden map[string]string           `json:"overridden,omitempty"` // key → the user file that set it
	Entries    map[string]CalibrationEntry `json:"entries"`
}

// calibrationFile is the --calibration file: a table per profile.
type calibrationFile struct {
	Profiles map[string]CalibrationTable `json:"profiles"`
}

// BlockIO is a device's throttle (0 = unlimited), as cgroup blk-throttle takes it.
type BlockIO struct {
	ReadBps   int64 `json:"read_bps"`
	WriteBps  int64 `json:"write_bps"`
	ReadIOPS  int64 `json:"read_iops"`
	WriteIOPS int64 `json:"write_iops"`
}

// Zero reports whether no limit is set.
func (b BlockIO) Zero() bool { return b == BlockIO{} }

// profileCalibration is what one profile's table sets.
type profileCalibration struct {
	table        CalibrationTable
	tmpIO        BlockIO        // the sandbox's /tmp device (ext4 /tmp only), at tmpScale's memory and above
	tmpScale     tmpMemoryScale // how tmpIO shrinks below that memory size (tmpmemory.go)
	coldFixed    time.Duration  // the provider's part of a cold start before the runtime's init
	fetchBps     float64        // package fetch rate; 0 = no fetch term
	shared       BlockIO        // the shared file system's one budget (the platform's default profile)
	hostTmp      BlockIO        // the host disk's budget for all the profile's /tmp images (hostdisk.go)
	net          *Shaping       // the profile's network token bucket; nil = none calibrated
	frontEnd     time.Duration  // the modelled front end on every invocation's reply (frontend.go)
	cpuSpeed     float64        // the provider's vCPU speed relative to lambda's (cpuspeed.go); 0 = 1
	cpuPeriod    int64          // the CFS period in µs (cpuperiod.go); 0 = the kernel's default
	syscallUs    float64        // the extra cost of every system call (syscallcost.go); 0 = none
	closeUs      float64        // the extra cost of every close (closecost.go); 0 = none
	deviceCPUUs  float64        // the CPU each /tmp device request costs (devicecpu.go); 0 = none
	initVCPU     float64        // the CPU during INIT (initcpu.go); 0 = the profile's share
	initOverhead time.Duration  // the modelled time inside INIT (initcpu.go); 0 = none
}

// Calibration is the platform's calibrated profiles; nil means none.
type Calibration struct {
	Path     string
	profiles map[string]*profileCalibration
}

// The table keys the platform reads (src/faascope/calibration/tables/platform-*.json).
const (
	keyTmpReadBps      = "tmp_read_bps"
	keyTmpWriteBps     = "tmp_write_bps"
	keyTmpReadIOPS     = "tmp_read_iops"
	keyTmpWriteIOPS    = "tmp_write_iops"
	keyNetBucketSize   = "net_bucket_size"
	keyNetOneTimeBurst = "net_one_time_burst"
	keyNetRefillRate   = "net_refill_rate"
	keyNetPeakRate     = "net_peak_rate"
	keyColdFixed       = "cold_start_fixed"
	keyColdFetchRate   = "cold_start_fetch_rate"
	keySharedReadBps   = "shared_read_bps"
	keySharedWriteBps  = "shared_write_bps"
	keySharedReadIOPS  = "shared_read_iops"
	keySharedWriteIOPS = "shared_write_iops"
)

// profileTables maps each calibrated profile to its table's name; unlimited has none, ever.
var profileTables = map[string]string{ProfileLambda: "platform-lambda", ProfileGCF: "platform-gcf"}

// LoadCalibration reads a --calibration file.
func LoadCalibration(path string) (*Calibration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := parseCalibration(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

func parseCalibration(b []byte) (*Calibration, error) {
	var f calibrationFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	c := &Calibration{profiles: map[string]*profileCalibration{}}
	for profile, t := range f.Profiles {
		want, ok := profileTables[profile]
		if !ok {
			return nil, fmt.Errorf("profiles.%s: not a calibrated profile (lambda, gcf)", profile)
		}
		if t.Table != want {
			return nil, fmt.Errorf("profiles.%s: table %q, want %q", profile, t.Table, want)
		}
		pc, err := derive(t)
		if err != nil {
			return nil, fmt.Errorf("profiles.%s (%s@%s): %w", profile, t.Table, t.Version, err)
		}
		c.profiles[profile] = pc
	}
	return c, nil
}

// derive turns a table's entries into the limits the platform applies. An entry that is absent
// leaves its limit off; an entry with another unit than the one the code expects is an error
// (the tables and the override loader keep units, so this only catches a renamed unit).
func derive(t CalibrationTable) (*profileCalibration, error) {
	pc := &profileCalibration{table: t}
	var err error
	get := func(key, unit string) float64 {
		e, ok := t.Entries[key]
		if !ok || err != nil {
			return 0
		}
		if e.Unit != unit {
			err = fmt.Errorf("entries.%s: unit %q, want %q", key, e.Unit, unit)
			return 0
		}
		if e.Value < 0 || math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
			err = fmt.Errorf("entries.%s: %v is not a number >= 0", key, e.Value)
			return 0
		}
		return e.Value
	}
	round := func(v float64) int64 { return int64(math.Round(v)) }
	pc.tmpIO = BlockIO{ReadBps: round(get(keyTmpReadBps, "B/s")), WriteBps: round(get(keyTmpWriteBps, "B/s")),
		ReadIOPS: round(get(keyTmpReadIOPS, "IOPS")), WriteIOPS: round(get(keyTmpWriteIOPS, "IOPS"))}
	pc.shared = BlockIO{ReadBps: round(get(keySharedReadBps, "B/s")), WriteBps: round(get(keySharedWriteBps, "B/s")),
		ReadIOPS: round(get(keySharedReadIOPS, "IOPS")), WriteIOPS: round(get(keySharedWriteIOPS, "IOPS"))}
	pc.hostTmp = BlockIO{ReadBps: round(get(keyHostTmpReadBps, "B/s")), WriteBps: round(get(keyHostTmpWriteBps, "B/s")),
		ReadIOPS: round(get(keyHostTmpReadIOPS, "IOPS")), WriteIOPS: round(get(keyHostTmpWriteIOPS, "IOPS"))}
	pc.tmpScale = tmpMemoryScale{memoryMB: get(keyTmpLimitsMemory, "MB"), exponent: get(keyTmpMemoryExponent, "1")}
	pc.coldFixed = time.Duration(get(keyColdFixed, "ms") * float64(time.Millisecond))
	pc.fetchBps = get(keyColdFetchRate, "B/s")
	pc.frontEnd = time.Duration(get(keyFrontEnd, "ms") * float64(time.Millisecond))
	pc.cpuSpeed = get(keyCPUSpeed, "1")
	pc.cpuPeriod = round(get(keyCPUPeriod, "ms") * 1000)
	pc.syscallUs = get(keySyscallCost, "us")
	pc.closeUs = get(keyCloseCost, "us")
	pc.deviceCPUUs = get(keyDeviceCPU, "us")
	pc.initVCPU = get(keyInitVCPU, "vCPU")
	pc.initOverhead = time.Duration(get(keyInitOverhead, "ms") * float64(time.Millisecond))
	size, refill := round(get(keyNetBucketSize, "B")), get(keyNetRefillRate, "B/s")
	burst, peak := round(get(keyNetOneTimeBurst, "B")), round(get(keyNetPeakRate, "B/s"))
	if err != nil {
		return nil, err
	}
	if (size > 0) != (refill > 0) {
		return nil, fmt.Errorf("entries %s and %s go together", keyNetBucketSize, keyNetRefillRate)
	}
	if size > 0 {
		// The bucket refills from empty in size/rate: Firecracker's (size, refill_time) form.
		pc.net = &Shaping{Size: size, RefillTime: time.Duration(float64(size) / refill * float64(time.Second)),
			OneTimeBurst: burst, PeakBps: peak}
	}
	return pc, nil
}

func (c *Calibration) profile(name string) *profileCalibration {
	if c == nil {
		return nil
	}
	return c.profiles[name]
}

// LimitsFor is LimitsFor with the profile's calibration applied: the /tmp device's block I/O
// limits (an ext4 /tmp only: GCF's is memory), scaled to the memory size (tmpmemory.go), and the modelled cold start, a fixed part plus
// the package's fetch at the calibrated rate (packageBytes: the zipped code and layers).
func (c *Calibration) LimitsFor(profile string, memoryMB, ephemeralMB int, packageBytes int64) (Limits, error) {
	lim, err := LimitsFor(profile, memoryMB, ephemeralMB)
	pc := c.profile(profile)
	if err != nil || pc == nil {
		return lim, err
	}
	if lim.TmpKind == TmpExt4 {
		lim.TmpIO = pc.tmpScale.forMemory(pc.tmpIO, memoryMB)
	}
	lim.ModelledColdStart = pc.coldFixed
	lim.CPUSpeed = pc.cpuSpeed
	lim.CPUPeriodUs = pc.cpuPeriod
	lim.SyscallCostUs = pc.syscallUs
	lim.CloseCostUs = pc.closeUs
	lim.DeviceCPUUs = pc.deviceCPUUs
	lim.InitVCPU, lim.InitOverhead = pc.initVCPU, pc.initOverhead
	if pc.fetchBps > 0 && packageBytes > 0 {
		lim.ModelledColdStart += time.Duration(float64(packageBytes) / pc.fetchBps * float64(time.Second))
	}
	return lim, nil
}

// netShape is the profile's calibrated token bucket (the "lambda" net shape), if any.
func (c *Calibration) netShape(profile string) (Shaping, bool) {
	if pc := c.profile(profile); pc != nil && pc.net != nil {
		return *pc.net, true
	}
	return Shaping{}, false
}

// sharedBudget is the shared file system's budget under a profile (the platform's default).
func (c *Calibration) sharedBudget(profile string) BlockIO {
	if pc := c.profile(profile); pc != nil {
		return pc.shared
	}
	return BlockIO{}
}

// CalibrationInfo names a profile's table in force, for the platform's status.
type CalibrationInfo struct {
	Table      string            `json:"table"`
	Version    string            `json:"version"`
	Overridden map[string]string `json:"overridden,omitempty"`
	// FrontEndMs is the modelled front end added to every invocation's client latency (0 = none).
	FrontEndMs float64 `json:"front_end_ms"`
	// SyscallCostUs is the extra cost of every system call in the profile's sandboxes (0 =
	// none); SyscallPadInsns the padding filter's instructions that give it on this machine,
	// once the probe has run (syscallcost.go).
	SyscallCostUs   float64 `json:"syscall_cost_us,omitempty"`
	SyscallPadInsns int     `json:"syscall_pad_insns,omitempty"`
	// CloseCostUs is the extra cost of every close in the profile's sandboxes (0 = none).
	CloseCostUs float64 `json:"close_cost_us,omitempty"`
	// DeviceCPUUs is the CPU each request to a sandbox's /tmp device costs it (0 = none).
	DeviceCPUUs float64 `json:"device_cpu_us,omitempty"`
}

// Info lists the tables in force per profile (empty without a calibration).
func (c *Calibration) Info() map[string]CalibrationInfo {
	out := map[string]CalibrationInfo{}
	if c == nil {
		return out
	}
	names := make([]string, 0, len(c.profiles))
	for n := range c.profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := c.profiles[n].table
		info := CalibrationInfo{Table: t.Table, Version: t.Version, Overridden: t.Overridden,
			FrontEndMs: float64(c.profiles[n].frontEnd) / 1e6, SyscallCostUs: c.profiles[n].syscallUs,
			CloseCostUs: c.profiles[n].closeUs, DeviceCPUUs: c.profiles[n].deviceCPUUs}
		if info.SyscallCostUs > 0 && syscallProbeDone() != nil {
			info.SyscallPadInsns, _ = syscallPadInsns(info.SyscallCostUs)
		}
		out[n] = info
	}
	return out
}

// anyProfile reports whether some profile's calibration has the property (the probes at start).
func (c *Calibration) anyProfile(has func(*profileCalibration) bool) bool {
	if c == nil {
		return false
	}
	for _, pc := range c.profiles {
		if has(pc) {
			return true
		}
	}
	return false
}

// hasSyscallCost reports whether any profile sets a system-call cost (the probe then runs at start).
func (c *Calibration) hasSyscallCost() bool {
	return c.anyProfile(func(pc *profileCalibration) bool { return pc.syscallUs > 0 })
}

// hasCloseCost reports whether any profile sets a cost of a close (its probe then runs at start).
func (c *Calibration) hasCloseCost() bool {
	return c.anyProfile(func(pc *profileCalibration) bool { return pc.closeUs > 0 })
}

// hasDeviceCPU reports whether any profile charges its sandboxes for their /tmp requests.
func (c *Calibration) hasDeviceCPU() bool {
	return c.anyProfile(func(pc *profileCalibration) bool { return pc.deviceCPUUs > 0 })
}

func (c *Calibration) path() string {
	if c == nil {
		return ""
	}
	return c.Path
}

// packageBytes is what a cold start fetches: the function's zipped code and its layers.
func packageBytes(cfg FunctionConfiguration) int64 {
	n := cfg.CodeSize
	for _, l := range cfg.Layers {
		n += l.CodeSize
	}
	return n
}
