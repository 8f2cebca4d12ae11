// Package platform is faascope's local FaaS platform: it serves the AWS Lambda REST API on
// loopback and runs each function instance in a sandbox with real CPU, memory and /tmp limits.
package platform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Config is how the platform was started.
type Config struct {
	DataDir        string
	Listen         string        // host:port of the Lambda API; loopback by default
	DefaultProfile string        // for functions without a faascope:profile tag
	KeepAlive      time.Duration // how long an idle instance stays warm
	Concurrency    int           // account-wide concurrent executions before throttling
	Isolation      string        // "namespaces" (real limits) or "none" (plain processes)
	InitTimeout    time.Duration // Lambda allows 10 s for a runtime to initialise
	HostNetwork    bool          // share the host's network instead of a namespace per sandbox
	Expose         []PortMapping // host loopback ports every sandbox may reach
	NetShape       string        // default network shaping (see ParseNetShape)
	SharedDir      string        // mounted at /mnt/shared in every sandbox; "" = none
	// UpdateWindow is the least time an update (UpdateFunctionCode, UpdateFunctionConfiguration)
	// stays InProgress (lifecycle.go); 0 = only as long as its work takes.
	UpdateWindow time.Duration
	// RuntimesDir holds the managed runtimes, one directory a family (runtimes.go):
	// <RuntimesDir>/python is mounted at /var/runtime for python3.*; "" = no managed runtimes.
	RuntimesDir string
	Token       string   // when set, API calls must present it (see authorized)
	S3          S3Config // where Code.S3Bucket/S3Key are read from (s3code.go); zero = nowhere
	// AsyncRetryDelays are the waits before each retry of a failed Event invocation; nil is
	// Lambda's (1 min, 2 min), empty means no retries (async.go).
	AsyncRetryDelays []time.Duration
	// AsyncQueue bounds the Event invocations waiting or running (async.go); zero fields are
	// the defaults.
	AsyncQueue AsyncQueueLimits
	// SpareSandboxes is how many sandboxes are kept made ahead for cold starts (spares.go); 0 or
	// less is none.
	SpareSandboxes int
	// Calibration is the calibrated profiles' figures (calibration.go, --calibration); nil =
	// none: no block I/O limits, no modelled cold start, no shared-file-system budget.
	Calibration *Calibration
}

// chargesDeviceCPU is whether this platform charges sandboxes for their /tmp requests
// (devicecpu.go): a profile must set device_cpu, and only namespaced sandboxes have the
// cgroups and loop devices it is charged through.
func (cfg Config) chargesDeviceCPU() bool {
	return cfg.Isolation == "namespaces" && cfg.Calibration.hasDeviceCPU()
}

// DefaultUpdateWindow is the command's default for Config.UpdateWindow: the shortest hold under
// which a call made right after an update's answer finds it InProgress, as AWS's recordings show
// (not a measured AWS figure: AWS publishes none; docs/platform.md says how it was chosen).
const DefaultUpdateWindow = 200 * time.Millisecond

// DefaultSpareSandboxes is the command's default for Config.SpareSandboxes.
const DefaultSpareSandboxes = 2

// Platform is the running local FaaS platform.
type Platform struct {
	cfg        Config
	store      functionStore
	cgroupDir  string     // parent cgroup for this platform's sandboxes
	aliveLock  *os.File   // this platform's lock while it lives (platformlock.go)
	commitMu   sync.Mutex // serialises changes to functions (see functions.go); outside mu
	asyncQueue asyncQueue // the Event invocations held (async.go)
	// lastGeneration is the last function generation handed out (generation.go): one counter for
	// every function, so a name deleted and created again never repeats a generation its old
	// instances carry.
	lastGeneration atomic.Int64
	mu             sync.Mutex              // guards the tables below; never held across disk I/O
	functions      map[fnKey]*Function     // published, never modified in place
	idle           map[poolKey][]*Instance // per function version, most recently used last
	instances      map[string]*Instance
	inFlight       int
	admissions     uint64                // invocations ever admitted or refused (frontend.go: was one alone)
	localPaths     map[string]*localPath // per profile: this machine's request path (frontend.go)
	seq            int
	ctx            context.Context
	cancel         context.CancelFunc
	wg             sync.WaitGroup
	logDir         string
	logFiles       functionLogs // one descriptor per function's log file, shared by its instances

	// Concurrency pools (concurrency.go): invocations in flight in the unreserved pool and per
	// function with a reservation, and the sum of all reservations; guarded by mu.
	unreservedInFlight int
	reservedInFlight   map[fnKey]int
	reservedSum        int
	layers             map[string]map[int64]*layerVersion // name → version → layer version (layers.go); guarded by mu
	s3                 *s3Source                          // nil without --s3-endpoint (s3code.go)
	code               *codeStore                         // packages and layers unpacked once (codestore.go)
	tmpPool            *tmpPool                           // ext4 /tmp images formatted ahead (tmppool.go)
	hostDisk           *hostDisk                          // under the lambda sandboxes' /tmp images (hostdisk.go)
	spares             *spares                            // sandboxes made ahead (spares.go)
	blkio              blkioTarget                        // the platform's block I/O group (blkio.go)
	shared             *sharedDevice                      // the shared directory's budgeted device (shareddev.go)
	tmpDirectIO        bool                               // the data directory allows direct I/O (loopdio.go)
	// routeDraw draws the uniform number a weighted alias routes by (invoke.go); guarded by mu.
	// rand.Float64 in use; a test gives a seeded source so its count is reproducible.
	routeDraw func() float64
}

// New loads the functions persisted in the data directory and clears what a crashed
// predecessor left behind (sandboxes, cgroups).
func New(cfg Config) (*Platform, error) {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 5 * time.Minute
	}
	if cfg.InitTimeout <= 0 {
		cfg.InitTimeout = 10 * time.Second
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1000
	}
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	cfg.DataDir = abs
	sum := sha256.Sum256([]byte(abs))
	p := &Platform{
		cfg: cfg, store: functionStore{dir: filepath.Join(abs, "functions")},
		cgroupDir: "faascope/" + hex.EncodeToString(sum[:6]),
		idle:      map[poolKey][]*Instance{}, instances: map[string]*Instance{},
		logDir: filepath.Join(abs, "logs"), reservedInFlight: map[fnKey]int{}, localPaths: map[string]*localPath{},
		routeDraw: rand.Float64,
	}
	if p.s3, err = newS3Source(cfg.S3); err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	if _, err := LimitsFor(cfg.DefaultProfile, defaultMemoryMB, minEphemeralMB); err != nil {
		return nil, err
	}
	if _, err := ParseNetShape(cfg.NetShape, cfg.Calibration); err != nil {
		return nil, fmt.Errorf("net shape: %w", err)
	}
	if cfg.SharedDir != "" {
		if cfg.SharedDir, err = filepath.Abs(cfg.SharedDir); err != nil {
			return nil, err
		}
		unmountStale(cfg.SharedDir) // a killed platform's dead mount answers nothing, not even stat
		if err := os.MkdirAll(cfg.SharedDir, 0o1777); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{p.store.dir, p.sandboxRoot(), p.logDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if cfg.Isolation == "namespaces" {
		// Held before anything is cleaned or a uid handed out (platformlock.go). A second
		// platform on this data directory cannot have it; it goes on without, as before.
		if p.aliveLock, err = lockPlatform(filepath.Base(p.cgroupDir)); err != nil {
			log.Printf("%v", err)
		}
	}
	p.cleanStale()
	if p.code, err = newCodeStore(filepath.Join(abs, "code")); err != nil {
		return nil, err
	}
	if cfg.Isolation == "namespaces" {
		if p.tmpPool, err = newTmpPool(filepath.Join(abs, "tmp-images")); err != nil {
			return nil, err
		}
	}
	if p.functions, err = p.store.loadAll(); err != nil {
		return nil, err
	}
	p.lastGeneration.Store(int64(lastGeneration(p.functions)))
	for _, f := range p.functions {
		p.reservedSum += reservation(f)
	}
	if p.layers, err = p.layerStore().loadAll(); err != nil {
		return nil, fmt.Errorf("layers: %w", err)
	}
	if cfg.Isolation == "namespaces" && cfg.Calibration.hasSyscallCost() {
		// Before the spares, whose set-up would load the machine the probe times.
		if _, err := probeSyscallCost(); err != nil {
			p.tmpPool.close()
			return nil, fmt.Errorf("syscall_cost: %w", err)
		}
	}
	if cfg.Isolation == "namespaces" && cfg.Calibration.hasCloseCost() {
		closeNotifyRoundTrip() // the same: measured before the machine is loaded
	}
	if cfg.chargesDeviceCPU() {
		// Loaded once here, so that the status says at once whether it could be (devicecpu.go).
		if _, err := deviceCPUMechanism(); err != nil {
			log.Printf("device_cpu is not charged on this machine: %v", err)
		}
	}
	if cfg.Isolation == "namespaces" {
		if err := p.setupBlockIO(); err != nil {
			p.tmpPool.close()
			return nil, err
		}
		if err := p.setupHostDisk(); err != nil { // hostdisk.go
			p.tmpPool.close()
			p.shared.close()
			return nil, err
		}
		p.spares = newSpares(spareOptions{CgroupGroup: p.cgroupDir, Network: !cfg.HostNetwork,
			SharedDir: cfg.SharedDir, Sources: p.sandboxSources()}, p.sandboxRoot(), cfg.SpareSandboxes)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if cfg.Isolation == "namespaces" && p.aliveLock != nil {
		go p.sweepDeadPlatformsAgain()
	}
	p.collectCode() // what no function refers to any more (deleted while the platform was down)
	p.resumePreparing()
	p.wg.Add(1)
	go p.reap()
	return p, nil
}

func (p *Platform) sandboxRoot() string { return filepath.Join(p.cfg.DataDir, "sandboxes") }

// sandboxSources are the host directories every sandbox's root is built from: the code store,
// /tmp images, the sandboxes' own directories (all in the data directory) and the shared one.
func (p *Platform) sandboxSources() []string {
	// The managed runtimes' directory too: a spare keeps only the mounts its roots are built
	// from (sparemounts.go), and /var/runtime is bound from there.
	return []string{p.cfg.DataDir, p.cfg.SharedDir, p.cfg.RuntimesDir}
}

func (p *Platform) cleanStale() {
	entries, _ := os.ReadDir(p.sandboxRoot())
	for _, e := range entries {
		os.RemoveAll(filepath.Join(p.sandboxRoot(), e.Name()))
	}
	p.store.clearStaging()
	os.RemoveAll(p.prepareDir())
	if p.cfg.Isolation == "namespaces" {
		RemoveStaleCgroups(p.cgroupDir)
		if p.aliveLock != nil {
			removeDeadPlatformsCgroups(p.aliveLock, filepath.Base(p.cgroupDir))
		}
	}
}

// sweepDeadPlatformsAgain repeats the sweep of dead platforms' groups a little later: a
// platform SIGKILLed just before this one started may still hold its lock while the kernel
// tears it down (seen since devicecpu.go; why it takes longer is not measured), and its frozen
// sandboxes would otherwise run on until some later platform starts.
func (p *Platform) sweepDeadPlatformsAgain() {
	for _, wait := range []time.Duration{time.Second, 3 * time.Second, 10 * time.Second} {
		select {
		case <-p.ctx.Done():
			return
		case <-time.After(wait):
		}
		removeDeadPlatformsCgroups(p.aliveLock, filepath.Base(p.cgroupDir))
	}
}

// Close destroys every instance and stops background work.
func (p *Platform) Close() {
	p.cancel()
	p.mu.Lock()
	all := make([]*Instance, 0, len(p.instances))
	for _, in := range p.instances {
		all = append(all, in)
	}
	p.instances = map[string]*Instance{}
	p.idle = map[poolKey][]*Instance{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Add(1)
		go func(in *Instance) { defer wg.Done(); in.close() }(in)
	}
	wg.Wait()
	// Async invocations end once their instances are gone; the reaper ends with the context;
	// instances retired just before the stop finish their destruction (closeLater).
	p.wg.Wait()
	p.tmpPool.close()
	p.spares.close()
	p.shared.close()
	p.hostDisk.close()
	// The /etc files the sandboxes shared go with the last of them: a stopped platform leaves
	// nothing in its sandboxes' directory.
	os.RemoveAll(filepath.Join(p.sandboxRoot(), sharedEtcDir))
	os.RemoveAll(filepath.Join(p.sandboxRoot(), sharedEtcDir+".tmp"))
	if p.cfg.Isolation == "namespaces" {
		RemoveParentCgroups(p.cgroupDir)
		removePlatformBlkio(p.cgroupDir)
	}
	if p.aliveLock != nil {
		p.aliveLock.Close()
	}
}

// keepAlive is the function's idle lifetime: its faascope:keep-alive tag, else the platform's.
func (p *Platform) keepAlive(f *Function) time.Duration {
	if v, ok := f.Tags[TagKeepAlive]; ok {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
	}
	return p.cfg.KeepAlive
}

// reap evicts instances idle for longer than their keep-alive, so cold starts are real.
func (p *Platform) reap() {
	defer p.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		}
		if n%codeCollectTicks == 0 {
			p.collectCode()
		}
		now := time.Now()
		var evict []*Instance
		p.mu.Lock()
		for pool, list := range p.idle {
			f := p.functions[pool.fnKey]
			keep := list[:0]
			for _, in := range list {
				if !p.current(in) || now.Sub(in.lastUsed) >= p.keepAlive(f) {
					evict = append(evict, in)
					delete(p.instances, in.ID)
				} else {
					keep = append(keep, in)
				}
			}
			p.idle[pool] = keep
		}
		p.mu.Unlock()
		for _, in := range evict {
			in.close()
		}
	}
}

// InstanceInfo is one instance as /faascope/instances lists it.
type InstanceInfo struct {
	ID       string    `json:"id"`
	Function string    `json:"function"`
	Busy     bool      `json:"busy"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used"`
	Invokes  int       `json:"invocations"`
	Pid      int       `json:"pid"`
}

// Status is the platform's state as /faascope/health reports it.
type Status struct {
	OK            bool          `json:"ok"`
	Profile       string        `json:"profile"`
	Isolation     string        `json:"isolation"`
	CgroupVersion int           `json:"cgroup_version"`
	KeepAliveS    float64       `json:"keep_alive_s"`
	Concurrency   int           `json:"concurrency"`
	Instances     int           `json:"instances"`
	InFlight      int           `json:"in_flight"`
	DataDir       string        `json:"data_dir"`
	Arch          string        `json:"arch"`
	Pid           int           `json:"pid"`
	HostNetwork   bool          `json:"host_network"`
	Expose        []PortMapping `json:"expose"`
	NetShape      string        `json:"net_shape"`
	SharedDir     string        `json:"shared_dir"`
	S3Endpoint    string        `json:"s3_endpoint"` // where S3 code is read from; "" = refused
	// Calibration names the calibration table (and version, and what a user file overrode) in
	// force per profile; empty = uncalibrated.
	Calibration     map[string]CalibrationInfo `json:"calibration"`
	CalibrationFile string                     `json:"calibration_file"`
	// SharedBudget is the shared file system's one throughput budget (zero = none).
	SharedBudget BlockIO `json:"shared_budget"`
	// HostTmpBudget is the host disk's budget, shared by every lambda sandbox's /tmp (zero = none).
	HostTmpBudget BlockIO `json:"host_tmp_budget"`
	// BlockIOLimits: a block I/O controller holds the calibrated device limits; TmpDirectIO: the
	// loop devices of ext4 /tmp read and write with direct I/O (loopdio.go).
	BlockIOLimits bool `json:"block_io_limits"`
	TmpDirectIO   bool `json:"tmp_direct_io"`
	// SyscallProbe is this machine's time per system call under padding filters, from which a
	// profile's syscall_cost becomes instructions (syscallcost.go); nil = not measured.
	SyscallProbe *SyscallProbe `json:"syscall_probe,omitempty"`
	// DeviceCPU says whether the profiles' device_cpu is charged here, and if not why
	// (devicecpu.go).
	DeviceCPU DeviceCPUState `json:"device_cpu"`
}

// Status reports how the platform runs and how busy it is.
func (p *Platform) Status() Status {
	p.mu.Lock()
	n, inflight := len(p.instances), p.inFlight
	p.mu.Unlock()
	return Status{OK: true, Profile: p.cfg.DefaultProfile, Isolation: p.cfg.Isolation,
		CgroupVersion: CgroupVersion(), KeepAliveS: p.cfg.KeepAlive.Seconds(),
		Concurrency: p.cfg.Concurrency, Instances: n, InFlight: inflight,
		DataDir: p.cfg.DataDir, Arch: hostArch(), Pid: pid(),
		HostNetwork: p.cfg.HostNetwork || p.cfg.Isolation != "namespaces", Expose: p.cfg.Expose,
		NetShape: p.cfg.NetShape, SharedDir: p.cfg.SharedDir, S3Endpoint: p.cfg.S3.Endpoint,
		Calibration: p.cfg.Calibration.Info(), CalibrationFile: p.cfg.Calibration.path(),
		SharedBudget: p.sharedBudget(), HostTmpBudget: p.hostTmpBudgetInForce(), BlockIOLimits: p.blkio.Dir != "", TmpDirectIO: p.tmpDirectIO,
		SyscallProbe: syscallProbeDone(),
		DeviceCPU:    DeviceCPUStatus(p.cfg.chargesDeviceCPU())}
}

// hostArch is the Lambda name of the architecture the platform runs functions for.
func hostArch() string {
	if runtime.GOARCH == "arm64" {
		return "arm64"
	}
	return "x86_64"
}

// Instances lists live instances, for tests and the CLI.
func (p *Platform) Instances() []InstanceInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []InstanceInfo{}
	for _, in := range p.instances {
		info := InstanceInfo{ID: in.ID, Function: in.Function, Busy: in.busy, Created: in.Created,
			LastUsed: in.lastUsed, Invokes: in.invokes}
		if in.Sandbox != nil && in.Sandbox.Pid > 0 {
			info.Pid = in.Sandbox.Pid
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// retireIdle closes the idle instances of a function's version (after an update or delete);
// busy ones retire when they finish because they are no longer current.
func (p *Platform) retireIdle(pool poolKey) {
	p.mu.Lock()
	list := p.idle[pool]
	delete(p.idle, pool)
	for _, in := range list {
		delete(p.instances, in.ID)
	}
	p.mu.Unlock()
	for _, in := range list {
		p.closeLater(in)
	}
}

// closeLater destroys an instance already taken out of the platform's books, in the background.
// It counts in wg, which Close waits for: a platform stopped right after a function's delete
// (as `faascope run` stops the one it started) used to exit in the middle of these, leaving
// the sandbox's cgroups, directory and /tmp image behind.
func (p *Platform) closeLater(in *Instance) {
	p.wg.Add(1)
	go func() { defer p.wg.Done(); in.close() }()
}

// retireFunction retires the idle instances of every version of a function.
func (p *Platform) retireFunction(key fnKey) {
	p.mu.Lock()
	var pools []poolKey
	for pool := range p.idle {
		if pool.fnKey == key {
			pools = append(pools, pool)
		}
	}
	p.mu.Unlock()
	for _, pool := range pools {
		p.retireIdle(pool)
	}
}

func init() { log.SetFlags(log.LstdFlags | log.Lmicroseconds) }
