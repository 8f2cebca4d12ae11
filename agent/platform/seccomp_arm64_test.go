package platform

// archSyscallNumbers: arm64 has no call of the policy that amd64 lacks; the shared ones are in
// seccomp_numbers_test.go.
var archSyscallNumbers = map[string]int{}
