package platform

import (
	"context"
	"strconv"
	"time"
)

// The INIT phase is not held to the memory size's CPU share on Lambda. lambda-perf's daily cold
// starts (github.com/maxday/lambda-perf, data/) report the same Init Duration at every memory
// size: a hello-world python3.12 zip 83.7, 84.9, 82.0 and 81.8 ms at 128, 256, 512 and 1024 MB
// (medians of ten, 2026-08-22), nodejs20.x 138.4, 140.6 and 141.1 ms at 128, 256 and 1024 MB, a
// Go custom runtime 49.6, 49.6, 50.1 and 50.2 ms. A single-threaded start-up held to 128 MB's
// 7.2 % of a vCPU would take about x8 as long as at 1024 MB's 58 %; it does not. A profile's
// calibration may therefore set:
//   - init_vcpu: the CPU the sandbox's quota gives from its start to the runtime's first /next
//     (at least the profile's own share); the memory size's quota binds from then on;
//   - init_overhead: a constant the provider spends inside INIT beyond what the runtime's own
//     start-up costs (lambda-perf's Go init, ~49 ms at every size, against a Go runtime's few
//     ms of start-up), served when the runtime first asks for work, so the runtime's Init
//     Duration and the cold invocation's latency include it and nothing the function measures
//     does.
const (
	keyInitVCPU     = "init_vcpu"
	keyInitOverhead = "init_overhead"
)

// initBoosted says whether INIT runs under more CPU than the sandbox's steady quota: a quota
// binds (VCPU > 0) and InitVCPU is more than it gives.
func (l Limits) initBoosted() bool { return l.VCPU > 0 && l.InitVCPU > l.quotaVCPU() }

// initCPUQuota is the (quota, period) in microseconds a sandbox runs its INIT under: its steady
// quota (cpuQuota), raised to InitVCPU where that is more.
func (l Limits) initCPUQuota() (quotaUs, periodUs int64) {
	if !l.initBoosted() {
		return l.cpuQuota()
	}
	boosted := l
	boosted.VCPU, boosted.CPUSpeed = l.InitVCPU, 0
	return boosted.cpuQuota()
}

// setCPU writes a CPU quota (-1 = none) and its period to the cgroup.
func (cg *Cgroup) setCPU(quota, period int64) error {
	periodText := strconv.FormatInt(period, 10)
	if cg.v2 {
		cpuMax := "max " + periodText
		if quota > 0 {
			cpuMax = strconv.FormatInt(quota, 10) + " " + periodText
		}
		return cg.write("", "cpu.max", cpuMax)
	}
	// v1 refuses a period under the quota's current slice only for quotas under 1 ms, which
	// cpuQuota never gives; the period goes first so the new quota is read against it.
	if err := cg.write("cpu", "cpu.cfs_period_us", periodText); err != nil {
		return err
	}
	return cg.write("cpu", "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
}

// endInit ends the sandbox's INIT phase once its runtime has asked for work: the memory size's
// CPU quota binds from now on, and the profile's modelled INIT overhead is served (ctx ends the
// wait early). It returns how long the overhead took.
func (sb *Sandbox) endInit(ctx context.Context) (time.Duration, error) {
	lim := sb.limits
	if sb.Cgroup != nil && lim.initBoosted() {
		if err := sb.Cgroup.setCPU(lim.cpuQuota()); err != nil {
			return 0, err
		}
	}
	if lim.InitOverhead <= 0 {
		return 0, nil
	}
	start := time.Now()
	t := time.NewTimer(lim.InitOverhead)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return time.Since(start), nil
}
