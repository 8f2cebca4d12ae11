package platform

import "golang.org/x/sys/unix"

// hostSyscallNumbers are the kernel's numbers of the policy's calls on the architecture the
// test runs on: the calls both architectures have, plus archSyscallNumbers (one file per arch,
// for the calls only that architecture has).
var hostSyscallNumbers = func() map[string]int {
	m := map[string]int{
		"add_key":           unix.SYS_ADD_KEY,
		"keyctl":            unix.SYS_KEYCTL,
		"request_key":       unix.SYS_REQUEST_KEY,
		"ptrace":            unix.SYS_PTRACE,
		"process_vm_readv":  unix.SYS_PROCESS_VM_READV,
		"process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"kcmp":              unix.SYS_KCMP,
		"pidfd_getfd":       unix.SYS_PIDFD_GETFD,
		"unshare":           unix.SYS_UNSHARE,
		"setns":             unix.SYS_SETNS,
		"clone3":            unix.SYS_CLONE3,
		"mount":             unix.SYS_MOUNT,
		"umount2":           unix.SYS_UMOUNT2,
		"pivot_root":        unix.SYS_PIVOT_ROOT,
		"open_tree":         unix.SYS_OPEN_TREE,
		"move_mount":        unix.SYS_MOVE_MOUNT,
		"fsopen":            unix.SYS_FSOPEN,
		"fsconfig":          unix.SYS_FSCONFIG,
		"fsmount":           unix.SYS_FSMOUNT,
		"fspick":            unix.SYS_FSPICK,
		"mount_setattr":     unix.SYS_MOUNT_SETATTR,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
		"name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
		"quotactl":          unix.SYS_QUOTACTL,
		"quotactl_fd":       unix.SYS_QUOTACTL_FD,
		"bpf":               unix.SYS_BPF,
		"perf_event_open":   unix.SYS_PERF_EVENT_OPEN,
		"userfaultfd":       unix.SYS_USERFAULTFD,
		"io_uring_setup":    unix.SYS_IO_URING_SETUP,
		"io_uring_enter":    unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER,
		"fanotify_init":     unix.SYS_FANOTIFY_INIT,
		"lookup_dcookie":    unix.SYS_LOOKUP_DCOOKIE,
		"syslog":            unix.SYS_SYSLOG,
		"init_module":       unix.SYS_INIT_MODULE,
		"finit_module":      unix.SYS_FINIT_MODULE,
		"delete_module":     unix.SYS_DELETE_MODULE,
		"kexec_load":        unix.SYS_KEXEC_LOAD,
		"kexec_file_load":   unix.SYS_KEXEC_FILE_LOAD,
		"reboot":            unix.SYS_REBOOT,
		"swapon":            unix.SYS_SWAPON,
		"swapoff":           unix.SYS_SWAPOFF,
		"settimeofday":      unix.SYS_SETTIMEOFDAY,
		"clock_settime":     unix.SYS_CLOCK_SETTIME,
		"clock_adjtime":     unix.SYS_CLOCK_ADJTIME,
		"acct":              unix.SYS_ACCT,
		"sethostname":       unix.SYS_SETHOSTNAME,
		"setdomainname":     unix.SYS_SETDOMAINNAME,
		"vhangup":           unix.SYS_VHANGUP,
		"nfsservctl":        unix.SYS_NFSSERVCTL,
	}
	for k, v := range archSyscallNumbers {
		m[k] = v
	}
	return m
}()
