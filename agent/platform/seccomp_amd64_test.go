package platform

import "golang.org/x/sys/unix"

// archSyscallNumbers are the policy's calls that only amd64 has (legacy module calls, port
// I/O, the LDT, uselib, _sysctl); the rest are in seccomp_numbers_test.go.
var archSyscallNumbers = map[string]int{
	"create_module":   unix.SYS_CREATE_MODULE,
	"get_kernel_syms": unix.SYS_GET_KERNEL_SYMS,
	"query_module":    unix.SYS_QUERY_MODULE,
	"iopl":            unix.SYS_IOPL,
	"ioperm":          unix.SYS_IOPERM,
	"modify_ldt":      unix.SYS_MODIFY_LDT,
	"uselib":          unix.SYS_USELIB,
	"_sysctl":         unix.SYS__SYSCTL,
}
