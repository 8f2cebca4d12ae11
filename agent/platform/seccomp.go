package platform

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sandbox's system-call policy: one deny list, read top to bottom like nsjail's policy
// files. Everything not listed is allowed (a Lambda function may run any Linux program); what is
// listed is what a function on Lambda cannot do either, or what reaches across sandboxes through
// the one kernel they share here (on Lambda every sandbox has a kernel of its own, a Firecracker
// VM, so a function that tries these only gets EPERM, which is what it gets here).
//
// The filter is classic BPF written by hand (seccompProgram) rather than a library: it is a
// few dozen instructions, golang.org/x/net/bpf is not a dependency of this module and the pure-Go
// libraries (elastic/go-seccomp-bpf) would add it plus their own syscall tables; here the
// numbers sit next to the reasons, and seccomp_test.go checks them against x/sys/unix for the
// architecture it runs on (seccomp_amd64_test.go, seccomp_arm64_test.go).
//
// Installed by the sandbox init after it has joined its own session keyring and dropped to the
// sandbox's user, immediately before exec, under no_new_privs.

// deniedSyscall is one refused call with its number on each architecture the agent ships for
// (-1: the call does not exist there).
type deniedSyscall struct {
	name  string
	amd64 int
	arm64 int
	why   string
}

var sandboxDenied = []deniedSyscall{
	// Kernel keyrings are not namespaced: a key added by one function could be read by another
	// with the same uid (Docker's default profile refuses these three for the same reason).
	{"add_key", 248, 217, "keyrings are shared by the kernel, not per sandbox"},
	{"keyctl", 250, 219, "keyrings are shared by the kernel, not per sandbox"},
	{"request_key", 249, 218, "keyrings are shared by the kernel, not per sandbox"},
	// Reading or changing another process's memory.
	{"ptrace", 101, 117, "no debugging or tracing of processes"},
	{"process_vm_readv", 310, 270, "no access to another process's memory"},
	{"process_vm_writev", 311, 271, "no access to another process's memory"},
	{"kcmp", 312, 272, "compares kernel state of other processes (ptrace access)"},
	{"pidfd_getfd", 438, 438, "steals descriptors from other processes (ptrace access)"},
	// Namespaces and mounts: a nested user namespace gives uid 0 with every capability in it
	// and with it the whole kernel surface of mount, netfilter and friends.
	{"unshare", 272, 97, "no new namespaces (user namespaces above all)"},
	{"setns", 308, 268, "no joining other namespaces"},
	{"clone3", 435, 435, "its flags are behind a pointer BPF cannot read: ENOSYS so libc falls back to clone"},
	{"mount", 165, 40, "the file system layout is the platform's"},
	{"umount2", 166, 39, "the file system layout is the platform's"},
	{"pivot_root", 155, 41, "the file system layout is the platform's"},
	{"open_tree", 428, 428, "new mount API"},
	{"move_mount", 429, 429, "new mount API"},
	{"fsopen", 430, 430, "new mount API"},
	{"fsconfig", 431, 431, "new mount API"},
	{"fsmount", 432, 432, "new mount API"},
	{"fspick", 433, 433, "new mount API"},
	{"mount_setattr", 442, 442, "new mount API"},
	{"open_by_handle_at", 304, 265, "opens files by handle, bypassing the mount namespace (shocker)"},
	{"name_to_handle_at", 303, 264, "only useful with open_by_handle_at"},
	{"quotactl", 179, 60, "disk quotas are the platform's"},
	{"quotactl_fd", 443, 443, "disk quotas are the platform's"},
	// Kernel extension and observation.
	{"bpf", 321, 280, "eBPF programs and maps"},
	{"perf_event_open", 298, 241, "performance counters see other processes and the kernel"},
	{"userfaultfd", 323, 282, "a classic tool for kernel exploits' race windows"},
	{"io_uring_setup", 425, 425, "large, frequently exploited kernel surface (Docker and ChromeOS refuse it)"},
	{"io_uring_enter", 426, 426, "large, frequently exploited kernel surface"},
	{"io_uring_register", 427, 427, "large, frequently exploited kernel surface"},
	{"fanotify_init", 300, 262, "watches the whole file system"},
	{"lookup_dcookie", 212, 18, "profiling interface"},
	{"syslog", 103, 116, "the host's kernel log"},
	{"init_module", 175, 105, "kernel modules"},
	{"finit_module", 313, 273, "kernel modules"},
	{"delete_module", 176, 106, "kernel modules"},
	{"create_module", 174, -1, "kernel modules"},
	{"get_kernel_syms", 177, -1, "kernel modules"},
	{"query_module", 178, -1, "kernel modules"},
	{"kexec_load", 246, 104, "replacing the kernel"},
	{"kexec_file_load", 320, 294, "replacing the kernel"},
	// The machine's state, which belongs to the host.
	{"reboot", 169, 142, "the host's power state"},
	{"swapon", 167, 224, "the host's swap"},
	{"swapoff", 168, 225, "the host's swap"},
	{"settimeofday", 164, 170, "the host's clock"},
	{"clock_settime", 227, 112, "the host's clock"},
	{"clock_adjtime", 305, 266, "the host's clock"},
	{"acct", 163, 89, "process accounting for the host"},
	{"sethostname", 170, 161, "the hostname is the platform's"},
	{"setdomainname", 171, 162, "the hostname is the platform's"},
	{"vhangup", 153, 58, "terminal control of the host"},
	{"nfsservctl", 180, 42, "kernel NFS server"},
	{"iopl", 172, -1, "direct port I/O"},
	{"ioperm", 173, -1, "direct port I/O"},
	{"modify_ldt", 154, -1, "16-bit segments, an old exploit vector"},
	{"uselib", 134, -1, "obsolete loader interface"},
	{"_sysctl", 156, -1, "obsolete sysctl interface"},
}

// cloneNamespaceFlags are clone(2)'s CLONE_NEW* flags (CLONE_NEWTIME is 0x80, which clone(2)
// reads as the exit signal: only clone3 and unshare take it, and both are refused).
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// Architecture tokens (linux/audit.h) and the clone numbers the filter inspects.
const (
	auditArchX86_64  = 0xc000003e
	auditArchAArch64 = 0xc00000b7
	x32SyscallBit    = 0x40000000
	cloneAMD64       = 56
	cloneARM64       = 220
	clone3Nr         = 435
	socketAMD64      = 41
	socketARM64      = 198
)

// refusedSocketFamilies are the address families socket(2) refuses (EPERM), read from its
// first argument. AF_VSOCK reaches the host and its VMs by context id, a channel no network
// namespace confines: a sandbox in its own network namespace could still talk to whatever
// listens on the host's vsock (Docker's default profile refuses AF_VSOCK for the same reason).
var refusedSocketFamilies = []uint32{unix.AF_VSOCK}

// seccomp_data offsets: nr (u32), arch (u32), instruction pointer (u64), args[6] (u64 each);
// both architectures are little-endian, so an argument's low 32 bits come first.
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16
)

// bpfAsm assembles classic BPF with symbolic jump targets (the kernel's jumps are 8-bit
// forward offsets; assembling by label keeps the hand-written program correct as the list grows).
type bpfAsm struct {
	ins    []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (a *bpfAsm) stmt(code uint16, k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *bpfAsm) jump(code uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{len(a.ins), jt, jf})
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *bpfAsm) label(name string) { a.labels[name] = len(a.ins) }

func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	for _, f := range a.fixups {
		for i, target := range []string{f.jt, f.jf} {
			if target == "" {
				continue
			}
			to, ok := a.labels[target]
			off := to - f.at - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("seccomp: jump from %d to %q (%d) out of range", f.at, target, to)
			}
			if i == 0 {
				a.ins[f.at].Jt = uint8(off)
			} else {
				a.ins[f.at].Jf = uint8(off)
			}
		}
	}
	return a.ins, nil
}

const (
	bpfLdW   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet   = unix.BPF_RET | unix.BPF_K
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retNoSys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
)

// seccompProgram builds the filter: a foreign architecture (or x86-64's x32 ABI, whose
// numbers would bypass the table) kills the process; each denied call returns EPERM (clone3
// ENOSYS); clone(2) with any CLONE_NEW* flag and socket(2) of a refused family return EPERM;
// everything else is allowed. (Neither architecture has socketcall(2), which would hide the
// family behind a pointer.)
func seccompProgram() ([]unix.SockFilter, error) {
	a := &bpfAsm{labels: map[string]int{}}
	a.stmt(bpfLdW, seccompDataArch)
	a.jump(bpfJeq, auditArchX86_64, "amd64", "")
	a.jump(bpfJeq, auditArchAArch64, "arm64", "kill")
	for _, arch := range []string{"amd64", "arm64"} {
		a.label(arch)
		a.stmt(bpfLdW, seccompDataNr)
		clone, socket := cloneARM64, socketARM64
		if arch == "amd64" {
			clone, socket = cloneAMD64, socketAMD64
			a.jump(bpfJge, x32SyscallBit, "kill", "")
		}
		a.jump(bpfJeq, uint32(clone), "clone", "")
		a.jump(bpfJeq, uint32(socket), "socket", "")
		for _, d := range sandboxDenied {
			nr := d.arm64
			if arch == "amd64" {
				nr = d.amd64
			}
			if nr < 0 {
				continue
			}
			target := "eperm"
			if nr == clone3Nr {
				target = "enosys"
			}
			a.jump(bpfJeq, uint32(nr), target, "")
		}
		a.stmt(bpfRet, retAllow)
	}
	a.label("clone")
	a.stmt(bpfLdW, seccompDataArg0)
	a.jump(bpfJset, cloneNamespaceFlags, "eperm", "")
	a.stmt(bpfRet, retAllow)
	a.label("socket")
	a.stmt(bpfLdW, seccompDataArg0) // the family is an int: the argument's low 32 bits
	for _, family := range refusedSocketFamilies {
		a.jump(bpfJeq, family, "eperm", "")
	}
	a.stmt(bpfRet, retAllow)
	a.label("eperm")
	a.stmt(bpfRet, retEPERM)
	a.label("enosys")
	a.stmt(bpfRet, retNoSys)
	a.label("kill")
	a.stmt(bpfRet, retKill)
	return a.assemble()
}

// installSeccomp loads the filter on the calling thread, which must be the one that execs the
// function (the filter is inherited across execve and by every child). no_new_privs must be
// set already: it is what lets an unprivileged process install a filter, and it is set anyway.
func installSeccomp() error {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		return fmt.Errorf("seccomp policy has no syscall table for %s", runtime.GOARCH)
	}
	prog, err := seccompProgram()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("install seccomp filter: %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}
