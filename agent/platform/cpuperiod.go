package platform

import "math"

// A CPU quota is enforced per CFS period: a sandbox may run quota microseconds in every period,
// then waits for the next. The period decides what a short burst of work costs: with a 100 ms
// period a 128 MB Lambda (7.2 % of a vCPU) runs its first 7.2 ms of CPU at full speed, so a
// runtime's ~4 ms start-up or 20 small reads finish unthrottled, and what follows waits up to
// 93 ms. Lambda's own period is shorter: on real Lambda at 128 MB a busy loop's pauses come in
// multiples of 20 ms (the profile's calibration, cpu_period), so short work is stretched by
// 1 / share as well. A profile's calibration may set cpu_period; without one the kernel's
// default, 100 ms, holds.
const keyCPUPeriod = "cpu_period"

// defaultCFSPeriodUs is the kernel's default CFS period, used where a profile sets none.
const defaultCFSPeriodUs = 100000

// minCFSQuotaUs is the kernel's smallest quota (1 ms) and largest period (1 s).
const (
	minCFSQuotaUs  = 1000
	maxCFSPeriodUs = 1000000
)

// cpuQuota is the (quota, period) pair in microseconds that gives the sandbox its quotaVCPU at
// the profile's period. Where the quota would fall under the kernel's 1 ms minimum, the period
// grows until it does not, so the share stays what the profile says (a clamp would raise it).
func (l Limits) cpuQuota() (quotaUs, periodUs int64) {
	periodUs = defaultCFSPeriodUs
	if l.CPUPeriodUs > 0 {
		periodUs = l.CPUPeriodUs
	}
	share := l.quotaVCPU()
	quotaUs = int64(share*float64(periodUs) + 0.5)
	if quotaUs < minCFSQuotaUs && share > 0 {
		periodUs = int64(math.Min(math.Ceil(minCFSQuotaUs/share), maxCFSPeriodUs))
		quotaUs = int64(math.Max(share*float64(periodUs)+0.5, minCFSQuotaUs))
	}
	return quotaUs, periodUs
}
