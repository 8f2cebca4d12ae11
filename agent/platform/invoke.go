package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Invocations: a warm instance of the function's current generation if there is one, else a
// cold start in a new sandbox; the instance goes back to the warm pool when it is done.

// invokeMeta describes how an invocation was served, for headers and the REPORT line.
type invokeMeta struct {
	InstanceID string
	Cold       bool
	Setup      time.Duration // the platform's part of a cold start: instance created → bootstrap exec'd
	Init       time.Duration // the runtime's: bootstrap exec'd → its first /next
	SetupSteps []Step        // Setup split into its steps (X-Faascope-Setup-Steps)
	Steps      []Step        // the invocation's path through the platform (X-Faascope-Invoke-Steps)
	// When the event was written to the runtime and its answer began (wall clock, to set beside
	// the agent's own timestamps: X-Faascope-Delivered-Ns, X-Faascope-Answered-Ns).
	Delivered, Answered time.Time
	Modelled            time.Duration // the profile's modelled cold-start cost, part of Setup
	Duration            time.Duration
	MemoryMB            int
	PeakBytes           int64
	RequestID           string
	Version             string // the version executed: X-Amz-Executed-Version
	Logs                []byte

	// The sandbox's network buckets as the invocation began (netbucket.go); NetShaped: any.
	NetIn, NetOut BucketLevel
	NetShaped     bool

	// Profile is the function's sandbox profile; Alone: no other invocation was in flight
	// from its admission to its result (frontend.go measures this machine's path on these).
	Profile string
	Alone   bool
}

// coldStart is how long the invocation's cold start took on the platform's path (0 warm).
func (m invokeMeta) coldStart() time.Duration {
	for _, s := range m.Steps {
		if s.Name == "cold_start" {
			return s.Dur
		}
	}
	return 0
}

// InvokeRequest is one invocation as the API received it.
type InvokeRequest struct {
	Name      string // the function's name, already parsed out of an ARN or name:qualifier
	Region    string // the function's region; "" is us-east-1
	Qualifier string // "", "$LATEST", a version number or an alias
	Payload   []byte
	// ClientContext is the decoded X-Amz-Client-Context (JSON), passed to the runtime as
	// Lambda-Runtime-Client-Context; "" when the caller sent none.
	ClientContext string
	// RequestID is given for Event invocations (answered before they run); "" makes a new one.
	RequestID string
	// Received is when the API began reading the request (zero: when Invoke was called); the
	// invocation's steps (invokeMeta.Steps) start there.
	Received time.Time
	// NoReport skips what only the REPORT line needs (Max Memory Used, read from the cgroup and
	// /proc): the API sets it when the caller asked for no log tail.
	NoReport bool
}

// Invoke runs one synchronous invocation. It returns errThrottled when the account's
// concurrency is exhausted.
func (p *Platform) Invoke(ctx context.Context, req InvokeRequest) (result, invokeMeta, error) {
	st := &stepTimer{last: req.Received}
	if st.last.IsZero() {
		st.last = time.Now()
	}
	st.mark("request")
	payload := req.Payload
	meta := invokeMeta{RequestID: req.RequestID}
	if meta.RequestID == "" {
		meta.RequestID = newRevision()
	}
	p.mu.Lock()
	f, t, err := p.invocationTarget(req)
	if err != nil {
		p.mu.Unlock()
		return result{}, meta, err
	}
	slot, err := p.admit(f) // concurrency.go
	if err != nil {
		p.mu.Unlock()
		return result{}, meta, err
	}
	meta.Profile = p.profileOf(f)
	alone, admitted := p.inFlight == 1, p.admissions
	cfg, gen := t.config, f.Generation
	pool := poolKey{f.key(), t.version}
	if v := f.version(t.version); v != nil {
		gen = v.Generation // the version's, which a re-created function's version of that number never has
	}
	in := p.popIdle(pool, gen)
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.leave(slot); p.mu.Unlock() }()
	st.mark("admit")

	meta.MemoryMB = cfg.MemorySize
	meta.Version = t.version
	for {
		if in == nil {
			var err error
			if in, err = p.coldStart(ctx, f, t, pool, gen, meta.RequestID); err != nil {
				if ie, ok := err.(*initError); ok {
					meta.Cold, meta.Logs = true, ie.logs // what the runtime printed before it failed
					return result{Payload: ie.payload, FuncError: "Unhandled"}, meta, nil
				}
				return result{}, meta, err
			}
			meta.Cold, meta.Setup, meta.Init, meta.SetupSteps = true, in.SetupDur, in.InitDur, in.SetupSteps
			meta.Modelled = in.Modelled
			st.mark("cold_start")
		}
		meta.InstanceID = in.ID
		span := time.Duration(cfg.Timeout) * time.Second
		inv := &invocation{RequestID: meta.RequestID, Payload: payload, Deadline: time.Now().Add(span),
			ClientContext: req.ClientContext, TraceID: newTraceID(time.Now()), InvokedArn: cfg.FunctionArn,
			deadlineSpan: span, done: make(chan result, 1)}
		mark := in.Logs.Mark()
		st.mark("prepare")
		t0 := time.Now()
		meta.NetIn, meta.NetOut, meta.NetShaped = in.Sandbox.Net.netBuckets(t0)
		res := in.run(inv)
		meta.Duration = time.Since(t0)
		meta.Delivered, meta.Answered = in.markRun(inv, st)
		if !req.NoReport {
			meta.PeakBytes = in.Sandbox.PeakMemory()
			in.Sandbox.FlushOutput(50 * time.Millisecond) // the log tail has all it printed
		}
		meta.Logs = in.Logs.Since(mark)
		p.release(in, res.Killed)
		st.mark("release")
		meta.Steps = st.steps
		if res.Undelivered && !meta.Cold {
			// A warm instance whose runtime had exited (aws-lambda-go exits after a panic) never
			// saw the invocation: Lambda gives it to a new execution environment, so does this.
			in = nil
			continue
		}
		p.mu.Lock()
		meta.Alone = alone && p.admissions == admitted && p.inFlight == 1
		p.mu.Unlock()
		return res, meta, nil
	}
}

// invocationTarget finds what req invokes: the function and the version it names, which must be
// Active. The caller holds p.mu.
func (p *Platform) invocationTarget(req InvokeRequest) (*Function, target, error) {
	ref := funcRef{fnKey{req.Region, req.Name}, req.Qualifier}
	if ref.Region == "" {
		ref.Region = defaultRegion
	}
	f, ok := p.functions[ref.fnKey]
	if !ok {
		// Invoke names the version it looked for: $LATEST when unqualified (as AWS answers).
		q := ref.Qualifier
		if q == "" {
			q = "$LATEST"
		}
		return nil, target{}, errNotFound(ref.fnKey, q)
	}
	t, err := p.resolve(f, ref)
	if a := f.Aliases[ref.Qualifier]; err == nil && a != nil && a.RoutingConfig != nil {
		// a weighted alias: this invocation may run its additional version, answered under the
		// alias's ARN like any invocation of the alias (X-Amz-Executed-Version says which ran)
		if v := routeAlias(a, p.routeDraw()); v != a.FunctionVersion {
			var routed target
			if routed, err = p.resolve(f, funcRef{ref.fnKey, v}); err == nil {
				routed.config.FunctionArn = t.config.FunctionArn
				t = routed
			}
		}
	}
	if err == nil {
		err = invocable(t.config)
	}
	return f, t, err
}

// poolKey names the warm instances of one version of a function ("$LATEST" or a number).
type poolKey struct {
	fnKey
	Version string
}

// InvokeAsync queues an Event invocation and returns at once (async.go).
func (p *Platform) InvokeAsync(req InvokeRequest) error {
	p.mu.Lock()
	_, _, err := p.invocationTarget(req)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if !p.asyncQueue.enter(len(req.Payload), p.cfg.AsyncQueue) {
		return errAsyncQueueFull
	}
	p.wg.Add(1)
	go p.invokeAsync(req, time.Now())
	return nil
}

// popIdle takes the most recently used warm instance of the pool's current generation whose
// process still runs.
func (p *Platform) popIdle(pool poolKey, gen int) *Instance {
	list := p.idle[pool]
	for len(list) > 0 {
		in := list[len(list)-1]
		list = list[:len(list)-1]
		if in.Version == gen && !in.exited() {
			p.idle[pool] = list
			in.busy = true
			return in
		}
		delete(p.instances, in.ID)
		p.closeLater(in)
	}
	p.idle[pool] = list
	return nil
}

// current says whether an instance still runs what its pool serves: the function's generation
// of $LATEST, or a version that still exists. The caller holds p.mu.
func (p *Platform) current(in *Instance) bool {
	f := p.functions[in.pool.fnKey]
	switch {
	case f == nil:
		return false
	case in.pool.Version == "$LATEST":
		return f.Generation == in.Version
	default:
		v := f.version(in.pool.Version)
		return v != nil && v.Generation == in.Version
	}
}

// release returns an instance to the warm pool, or destroys it when it died or is outdated.
func (p *Platform) release(in *Instance, killed bool) {
	p.mu.Lock()
	in.invokes++
	// An instance whose process has exited (after answering, as aws-lambda-go does after a
	// panic) must never be handed another invocation; dropWhenExited catches one that exits
	// once pooled.
	if killed || in.exited() || !p.current(in) || p.ctx.Err() != nil {
		delete(p.instances, in.ID)
		p.mu.Unlock()
		in.close()
		return
	}
	in.busy = false
	in.lastUsed = time.Now()
	p.idle[in.pool] = append(p.idle[in.pool], in)
	in.freezer.park(in.Sandbox)
	p.mu.Unlock()
}

func (p *Platform) coldStart(ctx context.Context, f *Function, t target, pool poolKey, gen int, requestID string) (*Instance, error) {
	cfg := t.config
	p.mu.Lock()
	p.seq++
	id := fmt.Sprintf("%s-%d-%d", cfg.FunctionName, gen, p.seq)
	if pool.Version != "$LATEST" {
		id = fmt.Sprintf("%s-v%s-%d", cfg.FunctionName, pool.Version, p.seq)
	}
	p.mu.Unlock()
	isolate := p.cfg.Isolation == "namespaces"
	in, err := newInstance(id, cfg.FunctionName, gen, !isolate || p.cfg.HostNetwork, isolate && p.cfg.HostNetwork)
	if err != nil {
		return nil, err
	}
	in.pool = pool
	in.busy = true
	limits, err := p.cfg.Calibration.LimitsFor(p.profileOf(f), cfg.MemorySize, cfg.EphemeralStorage.Size,
		packageBytes(cfg))
	if err != nil {
		in.server.Close()
		return nil, err
	}
	if d := limits.ModelledColdStart; d > 0 { // profile.go: the provider's modelled cost, on purpose
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			in.server.Close()
			return nil, ctx.Err()
		}
		in.Modelled = d
	}
	logFile, closeLog := p.logFiles.open(p.logPath(cfg.FunctionName))
	var out io.Writer = in.Logs
	if logFile != nil {
		out = io.MultiWriter(in.Logs, logFile)
	}
	netOpts, err := p.networkFor(f, in, isolate)
	if err != nil {
		in.server.Close()
		return nil, err
	}
	runtimeAPI := in.RuntimeAPIAddr()
	p.mu.Lock()
	optName := p.optEntry(cfg.Layers)
	p.mu.Unlock()
	sb, err := StartSandbox(SandboxOptions{
		ID: id, Dir: filepath.Join(p.sandboxRoot(), id), CodeZip: t.codePath,
		Code: p.code, CodeName: codeEntryName(cfg.CodeSha256), OptName: optName, TmpPool: p.tmpPool,
		Spares: p.spares, Sources: p.sandboxSources(),
		Limits: limits, Env: p.sandboxEnv(cfg, in, limits, runtimeAPI), CgroupGroup: p.cgroupDir,
		Isolate: isolate, Network: netOpts, SharedDir: p.cfg.SharedDir, Stdout: out,
		LayerZips:  p.layerZips(cfg.Layers),     // layers.go: mounted at /opt
		RuntimeDir: p.runtimeDirOf(cfg.Runtime), // runtimes.go: mounted at /var/runtime
		LangDir:    p.langDirOf(cfg.Runtime),    // interpreters.go: mounted at /var/lang
		OnUID:      in.serveUID,
	})
	in.Sandbox = sb
	if err != nil {
		in.close()
		closeLog()
		var ee *entrypointError
		if errors.As(err, &ee) {
			return nil, &initError{payload: lambdaError("Runtime.InvalidEntrypoint", "RequestId: "+requestID+" Error: "+ee.msg)}
		}
		return nil, &initError{payload: lambdaError("Runtime.SandboxError", err.Error())}
	}
	go func() { <-sb.Exited(); closeLog() }()
	p.mu.Lock()
	p.instances[id] = in
	p.mu.Unlock()
	go p.dropWhenExited(in)
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

// dropWhenExited removes an instance from the warm pool as soon as its process exits, frozen
// or not, so no invocation is handed to it. A busy instance is left to its invocation, which
// sees the exit itself (Instance.run) and whose release destroys it.
func (p *Platform) dropWhenExited(in *Instance) {
	<-in.Sandbox.Exited()
	p.mu.Lock()
	if in.busy || p.instances[in.ID] != in {
		p.mu.Unlock()
		return
	}
	delete(p.instances, in.ID)
	list := p.idle[in.pool]
	for i, x := range list {
		if x == in {
			p.idle[in.pool] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	in.close()
}

func (p *Platform) profileOf(f *Function) string {
	if v := f.Tags[TagProfile]; v != "" {
		return v
	}
	return p.cfg.DefaultProfile
}

// networkFor gives a sandbox its own network namespace, reaching only the Runtime API and the
// exposed ports (the platform's and the function's, relayed), shaped by the function's or the
// platform's token buckets. Nil means the host's network.
func (p *Platform) networkFor(f *Function, in *Instance, isolate bool) (*NetOptions, error) {
	if !isolate || p.cfg.HostNetwork {
		return nil, nil
	}
	shapeSpec := p.cfg.NetShape
	if v, ok := f.Tags[TagNetShape]; ok {
		shapeSpec = v
	}
	shape, err := NetShapeFor(shapeSpec, p.profileOf(f), p.cfg.Calibration)
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
	// The Runtime API is served in the namespace itself, by the instance's server.
	maps := []portMap{{Inside: RuntimeAPIPort, Serve: in.serveInside}}
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

// sandboxEnv is the function's environment as Lambda sets it for a provided.* runtime (env.go):
// Lambda's unreserved defaults, then the function's variables, then the reserved ones. For
// provided.* Lambda leaves AWS_EXECUTION_ENV and _X_AMZN_TRACE_ID unset (the runtime sets the
// latter from Lambda-Runtime-Trace-Id). Nothing of faascope's own is added (no FAASCOPE_*,
// HOME or TMPDIR): AWS's recorded environment has none (test_introspection_invoke).
// logStreamGUID is the execution environment's id in AWS_LAMBDA_LOG_STREAM_NAME: 32 hex digits
// on Lambda ("2024/01/02/[$LATEST]0123…"), whatever the platform calls the instance.
func logStreamGUID() string { return strings.ReplaceAll(newRevision(), "-", "") }

func (p *Platform) sandboxEnv(cfg FunctionConfiguration, in *Instance, lim Limits, runtimeAPI string) []string {
	env := runtimeDefaults()
	rt, _ := LookupRuntime(cfg.Runtime)
	env = append(env, runtimeEnv(rt)...) // a managed runtime's PATH, PYTHONPATH, … (runtimes.go)
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
	// Lambda's reserved variables come last and win over a function's (the API refuses them
	// now; a function stored before that rule may still carry some).
	if rt.Family != FamilyProvided && rt.Family != "" {
		env = append(env, "AWS_EXECUTION_ENV=AWS_Lambda_"+rt.Name) // reserved: unset for provided.*
	}
	return mergeEnv(append(env,
		"AWS_LAMBDA_RUNTIME_API="+runtimeAPI,
		"AWS_LAMBDA_FUNCTION_NAME="+cfg.FunctionName,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(cfg.MemorySize),
		"AWS_LAMBDA_FUNCTION_VERSION="+cfg.Version,
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+cfg.FunctionName,
		"AWS_LAMBDA_LOG_STREAM_NAME="+time.Now().UTC().Format("2006/01/02")+"/["+cfg.Version+"]"+logStreamGUID(),
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_REGION="+in.pool.Region, "AWS_DEFAULT_REGION="+in.pool.Region,
		"AWS_ACCESS_KEY_ID="+FunctionAccessKeyID, "AWS_SECRET_ACCESS_KEY="+FunctionSecretAccessKey,
		"LAMBDA_TASK_ROOT="+sandboxTaskRoot, "LAMBDA_RUNTIME_DIR="+sandboxRuntimeDir,
		"_HANDLER="+cfg.Handler,
	))
}

// CheckInvoke is a DryRun: what Invoke would refuse (a missing function, version or alias, a
// function that is not Active), without running anything.
func (p *Platform) CheckInvoke(req InvokeRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _, err := p.invocationTarget(req)
	return err
}
