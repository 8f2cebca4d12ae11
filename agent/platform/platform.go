// Package platform is faascope's local FaaS platform: it serves the AWS Lambda REST API on
// loopback and runs each function instance in a sandbox with real CPU, memory and /tmp limits.
package platform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
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
	Token          string        // when set, API calls must present it (see authorized)
}

// Platform is the running local FaaS platform.
type Platform struct {
	cfg       Config
	store     functionStore
	cgroupDir string                 // parent cgroup for this platform's sandboxes
	commitMu  sync.Mutex             // serialises changes to functions (see functions.go); outside mu
	mu        sync.Mutex             // guards the tables below; never held across disk I/O
	functions map[string]*Function   // published, never modified in place
	idle      map[string][]*Instance // per function, most recently used last
	instances map[string]*Instance
	inFlight  int
	seq       int
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	logDir    string
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
		idle:      map[string][]*Instance{}, instances: map[string]*Instance{},
		logDir: filepath.Join(abs, "logs"),
	}
	if _, err := LimitsFor(cfg.DefaultProfile, defaultMemoryMB, minEphemeralMB); err != nil {
		return nil, err
	}
	if _, err := ParseNetShape(cfg.NetShape); err != nil {
		return nil, fmt.Errorf("net shape: %w", err)
	}
	if cfg.SharedDir != "" {
		if cfg.SharedDir, err = filepath.Abs(cfg.SharedDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(cfg.SharedDir, 0o1777); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{p.store.dir, p.sandboxRoot(), p.logDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	p.cleanStale()
	if p.functions, err = p.store.loadAll(); err != nil {
		return nil, err
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.reap()
	return p, nil
}

func (p *Platform) sandboxRoot() string { return filepath.Join(p.cfg.DataDir, "sandboxes") }

func (p *Platform) cleanStale() {
	entries, _ := os.ReadDir(p.sandboxRoot())
	for _, e := range entries {
		os.RemoveAll(filepath.Join(p.sandboxRoot(), e.Name()))
	}
	p.store.clearStaging()
	if p.cfg.Isolation == "namespaces" {
		RemoveStaleCgroups(p.cgroupDir)
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
	p.idle = map[string][]*Instance{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Add(1)
		go func(in *Instance) { defer wg.Done(); in.close() }(in)
	}
	wg.Wait()
	// Async invocations end once their instances are gone; the reaper ends with the context.
	p.wg.Wait()
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
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		var evict []*Instance
		p.mu.Lock()
		for name, list := range p.idle {
			f := p.functions[name]
			keep := list[:0]
			for _, in := range list {
				if f == nil || in.Version != f.Generation || now.Sub(in.lastUsed) >= p.keepAlive(f) {
					evict = append(evict, in)
					delete(p.instances, in.ID)
				} else {
					keep = append(keep, in)
				}
			}
			p.idle[name] = keep
		}
		p.mu.Unlock()
		for _, in := range evict {
			in.close()
		}
	}
}

// invokeMeta describes how an invocation was served, for headers and the REPORT line.
type invokeMeta struct {
	InstanceID string
	Cold       bool
	Setup      time.Duration
	Init       time.Duration
	Duration   time.Duration
	MemoryMB   int
	PeakBytes  int64
	RequestID  string
	Logs       []byte
}

// Invoke runs one synchronous invocation. It returns errThrottled when the account's
// concurrency is exhausted.
func (p *Platform) Invoke(ctx context.Context, name string, payload []byte) (result, invokeMeta, error) {
	meta := invokeMeta{RequestID: newRevision()}
	p.mu.Lock()
	f, ok := p.functions[name]
	if !ok {
		p.mu.Unlock()
		return result{}, meta, errNotFound(name)
	}
	if p.inFlight >= p.cfg.Concurrency {
		p.mu.Unlock()
		return result{}, meta, errThrottled
	}
	p.inFlight++
	cfg, gen := f.Config, f.Generation
	in := p.popIdle(name, gen)
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.inFlight--; p.mu.Unlock() }()

	meta.MemoryMB = cfg.MemorySize
	if in == nil {
		var err error
		if in, err = p.coldStart(ctx, f, cfg, gen); err != nil {
			if ie, ok := err.(*initError); ok {
				meta.Cold, meta.Logs = true, ie.logs // what the runtime printed before it failed
				return result{Payload: ie.payload, FuncError: "Unhandled"}, meta, nil
			}
			return result{}, meta, err
		}
		meta.Cold, meta.Setup, meta.Init = true, in.Sandbox.Setup, in.InitDur
	}
	meta.InstanceID = in.ID
	span := time.Duration(cfg.Timeout) * time.Second
	inv := &invocation{RequestID: meta.RequestID, Payload: payload, Deadline: time.Now().Add(span),
		deadlineSpan: span, done: make(chan result, 1)}
	mark := in.Logs.Mark()
	t0 := time.Now()
	res := in.run(inv)
	meta.Duration = time.Since(t0)
	meta.PeakBytes = in.Sandbox.PeakMemory()
	meta.Logs = in.Logs.Since(mark)
	p.release(in, res.Killed)
	return res, meta, nil
}

// InvokeAsync queues an Event invocation and returns at once; the invocation waits for
// capacity instead of being throttled, as Lambda's internal queue does.
func (p *Platform) InvokeAsync(name string, payload []byte) error {
	if _, err := p.function(name); err != nil {
		return err
	}
	p.wg.Add(1)
	go p.invokeAsync(name, payload)
	return nil
}

func (p *Platform) invokeAsync(name string, payload []byte) {
	defer p.wg.Done()
	for {
		_, meta, err := p.Invoke(p.ctx, name, payload)
		if errors.Is(err, errThrottled) {
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			log.Printf("async invoke %s: %v", name, err)
		} else if len(meta.Logs) > 0 {
			log.Printf("async invoke %s on %s done in %s", name, meta.InstanceID, meta.Duration)
		}
		return
	}
}

// popIdle takes the most recently used warm instance of the current generation.
func (p *Platform) popIdle(name string, gen int) *Instance {
	list := p.idle[name]
	for len(list) > 0 {
		in := list[len(list)-1]
		list = list[:len(list)-1]
		if in.Version == gen {
			p.idle[name] = list
			in.busy = true
			return in
		}
		delete(p.instances, in.ID)
		go in.close()
	}
	p.idle[name] = list
	return nil
}

// release returns an instance to the warm pool, or destroys it when it died or is outdated.
func (p *Platform) release(in *Instance, killed bool) {
	p.mu.Lock()
	in.invokes++
	f := p.functions[in.Function]
	if killed || f == nil || f.Generation != in.Version || p.ctx.Err() != nil {
		delete(p.instances, in.ID)
		p.mu.Unlock()
		in.close()
		return
	}
	in.busy = false
	in.lastUsed = time.Now()
	p.idle[in.Function] = append(p.idle[in.Function], in)
	p.mu.Unlock()
}

func (p *Platform) coldStart(ctx context.Context, f *Function, cfg FunctionConfiguration, gen int) (*Instance, error) {
	p.mu.Lock()
	p.seq++
	id := fmt.Sprintf("%s-%d-%d", cfg.FunctionName, gen, p.seq)
	p.mu.Unlock()
	in, err := newInstance(id, cfg.FunctionName, gen)
	if err != nil {
		return nil, err
	}
	in.busy = true
	limits, err := LimitsFor(p.profileOf(f), cfg.MemorySize, cfg.EphemeralStorage.Size)
	if err != nil {
		in.server.Close()
		return nil, err
	}
	logFile, _ := os.OpenFile(filepath.Join(p.logDir, cfg.FunctionName+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	var out io.Writer = in.Logs
	if logFile != nil {
		out = io.MultiWriter(in.Logs, logFile)
	}
	isolate := p.cfg.Isolation == "namespaces"
	netOpts, err := p.networkFor(f, in, isolate)
	if err != nil {
		in.server.Close()
		return nil, err
	}
	runtimeAPI := in.RuntimeAPIAddr()
	if netOpts != nil {
		runtimeAPI = "127.0.0.1:" + strconv.Itoa(RuntimeAPIPort)
	}
	sb, err := StartSandbox(SandboxOptions{
		ID: id, Dir: filepath.Join(p.sandboxRoot(), id), CodeZip: p.store.codePath(cfg.FunctionName),
		Limits: limits, Env: p.sandboxEnv(cfg, in, limits, runtimeAPI), CgroupGroup: p.cgroupDir,
		Isolate: isolate, Network: netOpts, SharedDir: p.cfg.SharedDir, Stdout: out,
	})
	in.Sandbox = sb
	if err != nil {
		in.close()
		if logFile != nil {
			logFile.Close()
		}
		return nil, &initError{payload: lambdaError("Runtime.SandboxError", err.Error())}
	}
	if logFile != nil {
		go func() { <-sb.Exited(); logFile.Close() }()
	}
	p.mu.Lock()
	p.instances[id] = in
	p.mu.Unlock()
	if err := in.waitReady(ctx, p.cfg.InitTimeout); err != nil {
		p.mu.Lock()
		delete(p.instances, id)
		p.mu.Unlock()
		in.close()
		if ie, ok := err.(*initError); ok {
			ie.logs = in.Logs.Since(0)
			log.Printf("init of %s failed: %s", id, ie.payload)
		}
		return nil, err
	}
	return in, nil
}

func (p *Platform) profileOf(f *Function) string {
	if v := f.Tags[TagProfile]; v != "" {
		return v
	}
	return p.cfg.DefaultProfile
}

// networkFor gives a sandbox its own network namespace, reaching only the Runtime API and the
// exposed ports (the platform's and the function's), shaped by the function's or the
// platform's token buckets. Nil means the host's network.
func (p *Platform) networkFor(f *Function, in *Instance, isolate bool) (*NetOptions, error) {
	if !isolate || p.cfg.HostNetwork {
		return nil, nil
	}
	shapeSpec := p.cfg.NetShape
	if v, ok := f.Tags[TagNetShape]; ok {
		shapeSpec = v
	}
	shape, err := ParseNetShape(shapeSpec)
	if err != nil {
		return nil, err
	}
	ports := append([]PortMapping{}, p.cfg.Expose...)
	if v, ok := f.Tags[TagExpose]; ok {
		extra, err := ParsePorts(v)
		if err != nil {
			return nil, err
		}
		ports = append(ports, extra...)
	}
	maps := []portMap{{Inside: RuntimeAPIPort, Target: in.RuntimeAPIAddr()}}
	seen := map[int]bool{}
	for i := len(ports) - 1; i >= 0; i-- { // backwards: the function's mapping of a port wins
		pm := ports[i]
		if !seen[pm.Inside] {
			seen[pm.Inside] = true
			maps = append(maps, portMap{Inside: pm.Inside, Target: "127.0.0.1:" + strconv.Itoa(pm.Host), Shaped: true})
		}
	}
	return &NetOptions{Maps: maps, Shape: shape}, nil
}

func (p *Platform) sandboxEnv(cfg FunctionConfiguration, in *Instance, lim Limits, runtimeAPI string) []string {
	env := []string{}
	if cfg.Environment != nil {
		keys := make([]string, 0, len(cfg.Environment.Variables))
		for k := range cfg.Environment.Variables {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+cfg.Environment.Variables[k])
		}
	}
	// Lambda's reserved variables come last so a user's value cannot shadow them.
	return append(env,
		"AWS_LAMBDA_RUNTIME_API="+runtimeAPI,
		"AWS_LAMBDA_FUNCTION_NAME="+cfg.FunctionName,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(cfg.MemorySize),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+cfg.FunctionName,
		"AWS_LAMBDA_LOG_STREAM_NAME="+time.Now().UTC().Format("2006/01/02")+"/[$LATEST]"+in.ID,
		"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EXECUTION_ENV=faascope-local-"+lim.Profile, "_HANDLER="+cfg.Handler,
		"FAASCOPE_PROFILE="+lim.Profile, "FAASCOPE_INSTANCE_ID="+in.ID,
	)
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
		NetShape: p.cfg.NetShape, SharedDir: p.cfg.SharedDir}
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
		if in.Sandbox != nil && in.Sandbox.Cmd != nil && in.Sandbox.Cmd.Process != nil {
			info.Pid = in.Sandbox.Cmd.Process.Pid
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// retire closes a function's idle instances (after an update or delete); busy ones retire
// when they finish because their generation no longer matches.
func (p *Platform) retireIdle(name string) {
	p.mu.Lock()
	list := p.idle[name]
	delete(p.idle, name)
	for _, in := range list {
		delete(p.instances, in.ID)
	}
	p.mu.Unlock()
	for _, in := range list {
		go in.close()
	}
}

func init() { log.SetFlags(log.LstdFlags | log.Lmicroseconds) }
