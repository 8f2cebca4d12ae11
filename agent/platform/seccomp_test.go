package platform

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// The policy's hand-written numbers must be the kernel's: each is compared with x/sys/unix's
// SYS_* constant for the architecture the test runs on (hostSyscallNumbers, one file per arch).
func TestSeccompPolicyNumbersMatchTheKernels(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range sandboxDenied {
		if seen[d.name] {
			t.Errorf("%s listed twice", d.name)
		}
		seen[d.name] = true
		nr := d.amd64
		if runtime.GOARCH == "arm64" {
			nr = d.arm64
		}
		want, ok := hostSyscallNumbers[d.name]
		if !ok {
			want = -1
		}
		if nr != want {
			t.Errorf("%s on %s: policy says %d, x/sys/unix says %d", d.name, runtime.GOARCH, nr, want)
		}
	}
	// The calls the filter reads an argument of (clone's flags, socket's family).
	clone, socket := cloneAMD64, socketAMD64
	if runtime.GOARCH == "arm64" {
		clone, socket = cloneARM64, socketARM64
	}
	if clone != unix.SYS_CLONE || socket != unix.SYS_SOCKET {
		t.Errorf("clone %d, socket %d on %s; x/sys/unix says %d, %d", clone, socket, runtime.GOARCH,
			unix.SYS_CLONE, unix.SYS_SOCKET)
	}
	for name := range hostSyscallNumbers {
		if !seen[name] {
			t.Errorf("%s is in the number table but not in the policy", name)
		}
	}
	if prog, err := seccompProgram(); err != nil || len(prog) > 4096 {
		t.Fatalf("program: %d instructions, %v", len(prog), err)
	}
}
