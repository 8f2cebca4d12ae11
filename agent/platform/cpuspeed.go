package platform

// A provider's vCPU is not this machine's CPU, and not the other provider's either: the 2024
// thesis's CPU-bound cells (dd if=/dev/urandom writes of 128 KiB at 2048 MB, where both
// platforms give dd a whole vCPU: Lambda 1.158, GCF 1) took 450.6 µs a call on Lambda and
// 507.1 µs on GCF, while locally both profiles ran on the same CPU and the gcf profile won. A
// profile's calibration may therefore set cpu_speed: its vCPU's speed relative to the lambda
// profile's (the reference, 1), applied as the CPU quota VCPU × cpu_speed, so a CPU-bound task
// takes 1 / cpu_speed as long as under the lambda profile with the same vCPU. The lambda
// profile's own speed relative to this machine's CPU is not calibrated (docs/platform.md).
const keyCPUSpeed = "cpu_speed"

// quotaVCPU is the CPU the sandbox's quota gives: the provider's vCPU scaled by the profile's
// calibrated speed.
func (l Limits) quotaVCPU() float64 {
	if l.CPUSpeed > 0 {
		return l.VCPU * l.CPUSpeed
	}
	return l.VCPU
}
