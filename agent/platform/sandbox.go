package platform

import (
	"archive/zip"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SandboxUID is the first of the unprivileged uids functions run as (Lambda's is
// sbx_user1051); each sandbox gets one of its own (identity.go).
const SandboxUID = 1051

// SandboxSpec is what the host side passes to the in-namespace init (see sandboxinit.go).
type SandboxSpec struct {
	Rootfs  string `json:"rootfs"`
	TaskDir string `json:"task_dir"` // unpacked package (codestore.go), mounted read-only at /var/task
	OptDir  string `json:"opt_dir"`  // unpacked layers, mounted read-only at /opt; "" = an empty /opt
	// RuntimeDir is a managed runtime's directory (runtimes.go), mounted read-only at
	// /var/runtime; "" = an empty /var/runtime (provided.*).
	RuntimeDir string            `json:"runtime_dir"`
	LangDir    string            `json:"lang_dir"` // its exact interpreter (interpreters.go) at /var/lang; "" = none
	Tmp        TmpKind           `json:"tmp"`
	TmpSource  string            `json:"tmp_source"` // ext4 image or directory on the host
	TmpBytes   int64             `json:"tmp_bytes"`
	CgroupDirs map[string]string `json:"cgroup_dirs"` // bind-mounted read-only so the agent can see its limits
	CgroupV2   bool              `json:"cgroup_v2"`
	Env        []string          `json:"env"`
	Entrypoint string            `json:"entrypoint"` // path inside the sandbox
	UID        int               `json:"uid"`
	Isolate    bool              `json:"isolate"`
	SharedDir  string            `json:"shared_dir"` // mounted read-write at /mnt/shared in every sandbox (EFS stand-in)
	// SharedIDMap: fd 4 is a user namespace to idmap the shared directory with (identity.go).
	SharedIDMap bool   `json:"shared_idmap"`
	EtcDir      string `json:"etc_dir"`   // the sandbox's own /etc, bound read-only
	Hold        bool   `json:"hold"`      // not a sandbox: hold a user namespace (sharedDirUserns)
	ReportFD    int    `json:"report_fd"` // where the init reports its steps before exec; 0 = nowhere
	// Blkio is where the /tmp device's throttle is written (blkio.go); TmpIO the limits.
	Blkio blkioTarget `json:"blkio"`
	TmpIO BlockIO     `json:"tmp_io"`
	// SyscallPadInsns is the padding filter installed after the policy, the profile's
	// per-system-call cost on this machine (syscallcost.go); 0 = none.
	SyscallPadInsns int `json:"syscall_pad_insns"`
	// CloseFD is the socket the init may hand a close listener over (closecost.go); CloseCost
	// says it must: the profile's close_cost, served by the platform.
	CloseFD   int  `json:"close_fd"`
	CloseCost bool `json:"close_cost"`
	// tmpDev is the ext4 /tmp's loop device the init attached, for its report (never sent).
	tmpDev string
}

// SharedMount is where the shared directory appears in a sandbox (EFS mounts under /mnt).
const SharedMount = "/mnt/shared"

// Sandbox is one running function instance's process tree with its limits.
type Sandbox struct {
	ID     string
	Dir    string
	Cgroup *Cgroup
	Cmd    *exec.Cmd
	Pid    int // the sandbox's init (exec.Cmd's Process is released once the reaper has it)
	// Setup is the platform's part of the cold start on the host, before the sandbox is released
	// (code, /tmp, cgroup, namespaces); Steps splits it, and InitSteps adds the sandbox init's own
	// steps (mounts, pivot, privileges) up to the bootstrap's exec.
	Started   time.Time // when StartSandbox began
	Setup     time.Duration
	Steps     []Step
	initSteps chan initReport // the init's report (sandboxinit.go), sent once the bootstrap is exec'd
	Net       *sandboxNet     // nil when the sandbox shares the host's network
	exited    chan struct{}
	exitErr   error
	isolated  bool
	identity  *sandboxIdentity // the uid held for this sandbox, released on Destroy
	code, opt *codeRef         // the code store's entries mounted at /var/task and /opt
	tmpImage  *tmpImage        // the prepared /tmp image (tmppool.go), if any
	spare     *spare           // the process, cgroup and uid made ahead (spares.go)
	limits    Limits           // what the sandbox was started with (endInit, initcpu.go)
	// device is the /tmp device's account (devicecpu.go), once the init has reported its
	// device; deviceMu guards it against a Destroy racing the registration.
	deviceMu  sync.Mutex
	device    *deviceAccount
	destroyed bool
}

// maxSandboxSetups bounds the sandbox set-ups running at once. Each blocks OS threads in the
// kernel (cgroup writes and renames, clone with five namespace flags, mounts of /tmp images),
// and Go makes a thread for every goroutine blocked in a system call and keeps it: 400 cold
// starts at once left the platform with ~800 threads, and Go ends the process beyond 10,000
// (runtime/debug.SetMaxThreads), which a burst of thousands of cold starts could reach. The
// kernel serialises most of that work anyway (cgroup v1's locks), so a bound costs no
// throughput on this scale.
const maxSandboxSetups = 64

var sandboxSetups = make(chan struct{}, maxSandboxSetups)

// Step is one measured step of a cold start's set-up.
type Step struct {
	Name string
	Dur  time.Duration
}

// stepTimer splits a span into named steps.
type stepTimer struct {
	last  time.Time
	steps []Step
}

func (t *stepTimer) mark(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.steps = append(t.steps, Step{name, now.Sub(t.last)})
	t.last = now
}

// NetOptions give a sandbox its own network namespace with these relayed ports and limits.
type NetOptions struct {
	Maps  []portMap
	Shape NetShape
}

// SandboxOptions are the pieces of a function a sandbox needs.
type SandboxOptions struct {
	// OnUID is told the sandbox's uid before its process is let go (nil: nobody asks).
	OnUID   func(uid int)
	ID      string
	Dir     string // private working directory on the host, removed on Destroy
	CodeZip string
	// Code is the store its package and layers are unpacked into once (codestore.go); CodeName
	// and OptName are the entries they are expected under (codeEntryName, optEntryName). Nil
	// unpacks them into Dir for this sandbox alone.
	Code              *codeStore
	CodeName, OptName string
	LayerZips         []string // the function's layers in order, unpacked into one /opt (layers.go)
	RuntimeDir        string   // a managed runtime's directory, mounted at /var/runtime; "" for provided.*
	LangDir           string   // its exact interpreter (interpreters.go), mounted at /var/lang; "" = none
	Limits            Limits
	Env               []string
	CgroupGroup       string      // parent cgroup, e.g. "faascope/<platform id>"
	Isolate           bool        // namespaces, cgroups, private /tmp; false = a plain process (no root)
	Network           *NetOptions // nil = the host's network
	SharedDir         string
	Stdout            io.Writer
	TmpPool           *tmpPool // prepared ext4 /tmp images (tmppool.go); nil = make one now
	Spares            *spares  // sandboxes made ahead (spares.go); nil = make one now
	Sources           []string // host directories the root is built from (spareOptions.Sources)
}

// layerLabel names a layer's zip (layers/<name>/<version>.zip) in an error, as name:version.
func layerLabel(z string) string {
	return filepath.Base(filepath.Dir(z)) + ":" + strings.TrimSuffix(filepath.Base(z), ".zip")
}

// unpackCode finds the package and the layers in the code store, unpacking them there if they
// are not yet, and returns the directories to mount at /var/task and /opt ("" = none).
func (sb *Sandbox) unpackCode(o SandboxOptions) (task, opt string, err error) {
	if o.Code == nil {
		task = filepath.Join(o.Dir, "task")
		if err = unzip(o.CodeZip, task); err != nil {
			return "", "", fmt.Errorf("unpack function code: %w", err)
		}
		if len(o.LayerZips) > 0 {
			opt = filepath.Join(o.Dir, "opt")
			for _, z := range o.LayerZips {
				if err = unzip(z, opt); err != nil {
					return "", "", fmt.Errorf("unpack layer %s: %w", layerLabel(z), err)
				}
			}
		}
		return task, opt, nil
	}
	if sb.code, err = o.Code.acquire(o.CodeName, buildPackage(o.CodeZip)); err != nil {
		return "", "", fmt.Errorf("unpack function code: %w", err)
	}
	if len(o.LayerZips) > 0 {
		if sb.opt, err = o.Code.acquire(o.OptName, buildLayers(o.LayerZips, layerLabel)); err != nil {
			return "", "", err
		}
		opt = sb.opt.Dir
	}
	return sb.code.Dir, opt, nil
}

// StartSandbox finds the package unpacked in the code store, prepares /tmp and the cgroup, and
// starts the function's bootstrap inside fresh mount, PID, UTS and IPC namespaces.
func StartSandbox(o SandboxOptions) (sb *Sandbox, err error) {
	t0 := time.Now()
	st := &stepTimer{last: t0}
	sb = &Sandbox{ID: o.ID, Dir: o.Dir, exited: make(chan struct{}), isolated: o.Isolate, Started: t0, limits: o.Limits}
	// At most maxSandboxSetups set-ups at once; the others wait their turn (the step "queue",
	// reported only when there was a wait).
	select {
	case sandboxSetups <- struct{}{}:
	default:
		sandboxSetups <- struct{}{}
		st.mark("queue")
	}
	defer func() { <-sandboxSetups }()
	defer func() {
		if err != nil {
			sb.Destroy()
		}
	}()
	if err = os.MkdirAll(o.Dir, 0o700); err != nil {
		return sb, err
	}
	task, opt, err := sb.unpackCode(o)
	if err != nil {
		return sb, err
	}
	// Lambda runs /var/task/bootstrap, else /opt/bootstrap: a custom runtime may come in a layer.
	// A managed runtime's bootstrap is the runtime's own, /var/runtime/bootstrap.
	entry := "/var/task/bootstrap"
	if o.RuntimeDir != "" {
		entry = "/var/runtime/bootstrap"
		if err = checkEntrypoint(filepath.Join(o.RuntimeDir, "bootstrap")); err != nil {
			return sb, fmt.Errorf("the runtime's bootstrap (%s): %w", o.RuntimeDir, err)
		}
	} else if err = checkEntrypoint(filepath.Join(task, "bootstrap")); err != nil {
		if opt == "" || checkEntrypoint(filepath.Join(opt, "bootstrap")) != nil {
			return sb, err
		}
		entry, err = "/opt/bootstrap", nil
	}
	st.mark("code")
	if !o.Isolate {
		return sb, sb.startPlain(o, task, opt, entry, t0, st)
	}
	// The process, its namespaces, cgroup, uid and /etc: a spare made ahead (spares.go), else
	// one made now.
	sp := o.Spares.take()
	if sp != nil {
		st.mark("spare")
	} else {
		if sp, err = spawnSpare(spareOptions{Dir: o.Dir + ".spawn", CgroupGroup: o.CgroupGroup, ID: o.ID,
			Network: o.Network != nil, SharedDir: o.SharedDir, Sources: o.Sources}, st); err != nil {
			return sb, err
		}
	}
	sb.adopt(sp)
	if o.OnUID != nil {
		o.OnUID(sp.uid())
	}
	if err = sp.claim(o.Dir, o.Stdout); err != nil {
		return sb, err
	}
	spec := SandboxSpec{
		Rootfs: filepath.Join(o.Dir, "rootfs"), TaskDir: task, Tmp: o.Limits.TmpKind,
		TmpBytes: o.Limits.TmpBytes, Env: o.Env, Entrypoint: entry, OptDir: opt, RuntimeDir: o.RuntimeDir,
		LangDir: o.LangDir, UID: sp.uid(), Isolate: true, SharedDir: o.SharedDir, EtcDir: filepath.Join(o.Dir, "etc"),
		SharedIDMap: sp.sharedIDMap, ReportFD: sp.reportFD,
		CgroupDirs: sb.Cgroup.Dirs(), CgroupV2: sb.Cgroup.V2(),
		Blkio: sb.Cgroup.blkioTarget(), TmpIO: o.Limits.TmpIO,
		CloseFD: sp.closeFD, CloseCost: o.Limits.CloseCostUs > 0,
	}
	if spec.SyscallPadInsns, err = syscallPadInsns(o.Limits.SyscallCostUs); err != nil {
		return sb, err
	}
	st.mark("claim")
	switch o.Limits.TmpKind {
	case TmpExt4:
		if sb.tmpImage, err = o.TmpPool.take(o.TmpPool.imageFor(o.Dir, o.ID), o.Limits.TmpBytes); err != nil {
			return sb, err
		}
		spec.TmpSource = sb.tmpImage.path
	case TmpDir:
		spec.TmpSource = filepath.Join(o.Dir, "tmp")
		if err = os.MkdirAll(spec.TmpSource, 0o700); err != nil {
			return sb, err
		}
		if err = os.Chown(spec.TmpSource, spec.UID, spec.UID); err != nil {
			return sb, err
		}
	}
	st.mark("tmp")
	if err = sb.Cgroup.apply(o.Limits); err != nil {
		return sb, err
	}
	st.mark("limits")
	if o.Network != nil {
		if sb.Net, err = setupSandboxNet(sb.Pid, o.Network.Maps, o.Network.Shape); err != nil {
			return sb, err
		}
		st.mark("netns")
	}
	sb.Setup = time.Since(t0)
	sb.Steps = st.steps
	// The close listener's server starts before the init may hand it over (closecost.go).
	if sock := sp.takeCloseSock(); sock != nil {
		if spec.CloseCost {
			go receiveCloseNotify(sock, time.Duration(o.Limits.CloseCostUs*float64(time.Microsecond)))
		} else {
			sock.Close()
		}
	}
	// The spec is the go-ahead: the init reads it to the end, then builds its root.
	if err = sp.release(spec); err != nil {
		return sb, err
	}
	if o.Limits.DeviceCPUUs > 0 && o.Limits.TmpKind == TmpExt4 {
		go sb.chargeDeviceCPU(o.Limits.DeviceCPUUs)
	}
	return sb, nil
}

// chargeDeviceCPU registers the sandbox's /tmp device with the profile's device_cpu
// (devicecpu.go) once the init reports which it is, at its exec, before the function runs.
func (sb *Sandbox) chargeDeviceCPU(costUs float64) {
	var rep initReport
	select {
	case rep = <-sb.initSteps:
		sb.initSteps <- rep // setupTimes reads it too
	case <-sb.exited:
		return
	}
	if rep.TmpDev == "" {
		return
	}
	sb.deviceMu.Lock()
	defer sb.deviceMu.Unlock()
	if sb.destroyed {
		return
	}
	a, err := registerDeviceCPU(rep.TmpDev, sb.Cgroup.Dirs(), costUs)
	if err != nil {
		log.Printf("sandbox %s: device_cpu not charged: %v", sb.ID, err)
		return
	}
	sb.device = a
}

// initReport waits (briefly) for the sandbox init's report of its own steps; the zero report if
// none came (a plain process has none).
func (sb *Sandbox) initReport(wait time.Duration) initReport {
	if sb.initSteps == nil {
		return initReport{}
	}
	select {
	case r := <-sb.initSteps:
		sb.initSteps <- r
		return r
	case <-time.After(wait):
		return initReport{}
	}
}

// startPlain runs the bootstrap as an ordinary child process: no limits, a private TMPDIR.
// It is the fallback where namespaces and cgroups are unavailable (not root). Nothing can be
// mounted at /opt there: the layers' directory is $FAASCOPE_OPT_DIR instead.
func (sb *Sandbox) startPlain(o SandboxOptions, task, opt, entry string, t0 time.Time, st *stepTimer) error {
	tmp := filepath.Join(o.Dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	runtimeDir := o.RuntimeDir
	if runtimeDir == "" {
		runtimeDir = filepath.Join(o.Dir, "runtime")
		if err := os.MkdirAll(runtimeDir, 0o755); err != nil {
			return err
		}
	}
	bootstrap := filepath.Join(task, "bootstrap")
	switch entry {
	case "/opt/bootstrap":
		bootstrap = filepath.Join(opt, "bootstrap")
	case "/var/runtime/bootstrap":
		bootstrap = filepath.Join(runtimeDir, "bootstrap")
	}
	cmd := exec.Command(bootstrap)
	cmd.Dir = task
	// The package is not at /var/task here: the paths that name it follow it (a function's own
	// LD_LIBRARY_PATH is left as it is).
	env := append([]string{"TMPDIR=" + tmp}, o.Env...)
	env = append(env, "LAMBDA_TASK_ROOT="+task, "LAMBDA_RUNTIME_DIR="+runtimeDir)
	// The paths Lambda sets that name /var/task or /var/runtime, when the function left them.
	for _, name := range []string{"LD_LIBRARY_PATH", "PYTHONPATH", "NODE_PATH"} {
		if v := getEnv(o.Env, name); isLambdaPathDefault(name, v) {
			env = append(env, name+"="+hostPaths(v, task, runtimeDir))
		}
	}
	if opt != "" {
		env = append(env, "FAASCOPE_OPT_DIR="+opt)
	}
	if o.LangDir != "" { // nothing is mounted at /var/lang here: the bootstrap is told where it is
		env = append(env, langDirEnv+"="+o.LangDir)
	}
	cmd.Env = mergeEnv(env)
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	st.mark("tmp")
	sb.Setup = time.Since(t0)
	sb.Steps = st.steps
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start function: %w", err)
	}
	sb.Cmd, sb.Pid = cmd, cmd.Process.Pid
	go sb.wait()
	// Plain mode has no init to hold the process back: the limit is restored a moment after
	// the start (limits.go: RaiseFDLimit).
	return restoreSandboxFDLimit(cmd.Process.Pid)
}

// isLambdaPathDefault: v is the value Lambda gives the path variable name (env.go,
// runtimes.go), not one the function set.
func isLambdaPathDefault(name, v string) bool {
	switch name {
	case "LD_LIBRARY_PATH":
		lp := libraryPath(sandboxTaskRoot, sandboxRuntimeDir)
		return v == lp || v == "/var/lang/lib:"+lp
	case "PYTHONPATH":
		return v == sandboxRuntimeDir
	case "NODE_PATH":
		return strings.HasPrefix(v, "/opt/nodejs/node") && strings.HasSuffix(v, ":"+sandboxRuntimeDir+":"+sandboxTaskRoot)
	}
	return false
}

// hostPaths is a path list with /var/task and /var/runtime (and what is below them) replaced by
// the host directories a plain process finds them in.
func hostPaths(v, task, runtimeDir string) string {
	parts := strings.Split(v, ":")
	for i, p := range parts {
		for _, m := range [][2]string{{sandboxTaskRoot, task}, {sandboxRuntimeDir, runtimeDir}} {
			if p == m[0] || strings.HasPrefix(p, m[0]+"/") {
				parts[i] = m[1] + strings.TrimPrefix(p, m[0])
			}
		}
	}
	return strings.Join(parts, ":")
}

func (sb *Sandbox) wait() {
	sb.exitErr = sb.Cmd.Wait()
	close(sb.exited)
}

// Exited is closed when the sandbox's init process has ended.
func (sb *Sandbox) Exited() <-chan struct{} { return sb.exited }

// ExitErr describes how the process ended (valid after Exited is closed).
func (sb *Sandbox) ExitErr() error {
	if sb.spare != nil {
		return sb.spare.exitErr
	}
	return sb.exitErr
}

// FlushOutput waits (up to max) until the sandbox's output so far is in its log (spares.go).
// A plain process's output goes through exec's own copy, which cannot be waited on.
func (sb *Sandbox) FlushOutput(max time.Duration) {
	if sb.spare != nil && sb.spare.outR != nil {
		sb.spare.flushOutput(max)
	}
}

// OOMKilled reports whether the kernel killed something in the sandbox for lack of memory.
func (sb *Sandbox) OOMKilled() bool { return sb.Cgroup != nil && sb.Cgroup.OOMKills() > 0 }

// PeakMemory is the sandbox's highest memory use in bytes (0 when unknown): memory.go.
func (sb *Sandbox) PeakMemory() int64 {
	if sb.Cgroup == nil {
		return 0
	}
	return peakMemory(sb.Cgroup.PeakMemory(), sb.Cgroup.Pids())
}

// Destroy kills everything in the sandbox and removes its files. Mounts live only in the
// sandbox's own mount namespace, so they vanish with its last process (loop devices are
// set to auto-clear).
func (sb *Sandbox) Destroy() {
	// The device thread leaves the sandbox's cpu group first: the group's removal waits for it.
	sb.deviceMu.Lock()
	sb.destroyed = true
	sb.device.Close()
	sb.device = nil
	sb.deviceMu.Unlock()
	sb.Net.Close()
	if sb.Cgroup != nil {
		// Everything in the group, thawed after the signal so a frozen sandbox dies at once.
		sb.Cgroup.Kill()
	}
	if sb.Pid > 0 {
		select {
		case <-sb.exited: // reaped: the pid may be another process's by now
		default:
			_ = syscall.Kill(-sb.Pid, syscall.SIGKILL)
			_ = syscall.Kill(sb.Pid, syscall.SIGKILL)
		}
		select {
		case <-sb.exited:
		case <-time.After(5 * time.Second):
		}
	}
	if sb.Cgroup != nil {
		_ = sb.Cgroup.Remove()
	}
	if sb.Dir != "" {
		_ = os.RemoveAll(sb.Dir)
		sb.tmpImage.remove(sb.Dir) // on the host disk (hostdisk.go)
	}
	if sb.spare != nil {
		if sb.spare.gate != nil {
			sb.spare.gate.Close()
		}
		if s := sb.spare.takeCloseSock(); s != nil {
			s.Close()
		}
		if sb.spare.dir != "" { // never claimed
			os.RemoveAll(sb.spare.dir)
		}
	}
	// Nothing runs the code any more: the store may collect it once no function refers to it.
	sb.code.release()
	sb.opt.release()
	// Only now, with the group empty, may another sandbox have the uid.
	if sb.Cgroup == nil || len(sb.Cgroup.Dirs()) == 0 {
		sb.identity.release()
	}
}

// makeExt4 creates a sparse image and formats it; lazy init keeps this to milliseconds.
func makeExt4(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err = f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	f.Close()
	// 4,096-byte blocks whatever the size (mke2fs picks 1,024 below 512 MiB): a multiple of any
	// logical block size the loop device may take from the disk (loopdio.go).
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=1,lazy_journal_init=1",
		"-m", "0", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// entrypointError is a package whose bootstrap is missing or cannot be executed: Lambda
// accepts such a package and fails its invocations with Runtime.InvalidEntrypoint.
type entrypointError struct{ msg string }

func (e *entrypointError) Error() string { return e.msg }

// checkEntrypoint finds the bootstrap a provided.* runtime starts, with Lambda's messages.
func checkEntrypoint(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return &entrypointError{"Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]"}
	}
	if fi.Mode()&0o111 == 0 {
		return &entrypointError{"fork/exec /var/task/bootstrap: permission denied"}
	}
	return nil
}

// unzip extracts a function package or a layer, keeping executable bits and symbolic links
// (Lambda keeps both: layers of native libraries link libfoo.so to libfoo.so.1) and refusing
// whatever would write outside dest. The host unpacks, so a link must never be followed here:
// nothing is written below a link (a later layer's file under an earlier layer's link is
// refused), links are made after every file of the archive, and an existing link in a file's
// place is replaced, not written through. Inside the sandbox a link resolves in the sandbox's
// own root, where an absolute target names the sandbox's files, not the host's.
func unzip(src, dest string) error {
	r, err := zip.OpenReader(src)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	root := filepath.Clean(dest) + string(os.PathSeparator)
	budget := int64(maxUnzippedBytes) // limits.go: bounded by bytes written, whatever headers say
	var links []*zip.File
	for _, f := range r.File {
		target := filepath.Join(dest, f.Name)
		if !strings.HasPrefix(target, root) {
			return fmt.Errorf("zip entry %q escapes the package", f.Name)
		}
		if err := noLinkBetween(dest, filepath.Dir(target)); err != nil {
			return fmt.Errorf("zip entry %q: %w", f.Name, err)
		}
		switch {
		case f.FileInfo().IsDir():
			if fi, err := os.Lstat(target); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("zip entry %q: %s is a symbolic link", f.Name, f.Name)
			}
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case f.Mode()&os.ModeSymlink != 0:
			links = append(links, f)
		default:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := extractOne(f, target, &budget); err != nil {
				return err
			}
		}
	}
	for _, f := range links {
		if err := extractLink(f, dest, &budget); err != nil {
			return err
		}
	}
	return nil
}

// noLinkBetween checks that no directory from root (exclusive) down to dir is a symbolic link.
func noLinkBetween(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." {
		return err
	}
	p := root
	for _, part := range strings.Split(rel, string(os.PathSeparator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return nil // made later by MkdirAll, as a directory
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			rp, _ := filepath.Rel(root, p)
			return fmt.Errorf("lies below the symbolic link %s", rp)
		}
	}
	return nil
}

// extractLink makes a symbolic link entry (its content is the link's target).
func extractLink(f *zip.File, dest string, budget *int64) error {
	target := filepath.Join(dest, f.Name)
	if err := noLinkBetween(dest, filepath.Dir(target)); err != nil {
		return fmt.Errorf("zip entry %q: %w", f.Name, err)
	}
	in, err := f.Open()
	if err != nil {
		return err
	}
	var to strings.Builder
	err = copyBudget(&to, io.LimitReader(in, 4096), budget) // PATH_MAX
	in.Close()
	if err != nil {
		return err
	}
	if to.Len() == 0 || strings.ContainsRune(to.String(), 0) {
		return fmt.Errorf("zip entry %q is a symbolic link with no valid target", f.Name)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	// A later layer's link replaces an earlier layer's file or link (never a directory).
	if fi, err := os.Lstat(target); err == nil && !fi.IsDir() {
		if err := os.Remove(target); err != nil {
			return err
		}
	}
	return os.Symlink(to.String(), target)
}

func extractOne(f *zip.File, target string, budget *int64) error {
	in, err := f.Open()
	if err != nil {
		return err
	}
	defer in.Close()
	mode := os.FileMode(0o644)
	if f.Mode()&0o111 != 0 { // like Lambda, a bootstrap without its exec bit fails to start
		mode = 0o755
	}
	// A layer's file replaces an earlier layer's with its own mode (OpenFile keeps an existing
	// file's); nothing is there when a package is unpacked.
	if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
		return err
	}
	out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err = copyBudget(out, in, budget); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
