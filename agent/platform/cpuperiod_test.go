package platform

import (
	"strings"
	"testing"
)

// The packaged lambda table's cpu_period (Lambda's 20 ms, measured) reaches the lambda profile's
// limits; gcf sets none and keeps the kernel's 100 ms.
func TestCPUPeriodComesFromTheProfilesTable(t *testing.T) {
	cal, tables := packagedCalibration(t)
	if got := tables[ProfileLambda].Entries[keyCPUPeriod].Value; got != 20 {
		t.Fatalf("lambda cpu_period %v ms, want Lambda's measured 20", got)
	}
	lam, err := cal.LimitsFor(ProfileLambda, 128, 512, 0)
	if err != nil {
		t.Fatal(err)
	}
	quota, period := lam.cpuQuota()
	// 0.0724 vCPU (128 / 1769, to 4 places) over 20 ms: 1,448 µs
	if period != 20000 || quota != 1448 {
		t.Errorf("lambda 128 MB: quota %d µs per %d µs, want 1448 per 20000", quota, period)
	}
	gcf, _ := cal.LimitsFor(ProfileGCF, 2048, 512, 0)
	if _, p := gcf.cpuQuota(); p != defaultCFSPeriodUs {
		t.Errorf("gcf period %d µs, want the kernel's default %d", p, defaultCFSPeriodUs)
	}
}

// Under the kernel's 1 ms minimum quota the period grows instead, so the share is kept (a clamp
// of the quota to 1 ms would have given a 0.5 % sandbox 5 % over a 20 ms period).
func TestCPUQuotaUnderTheKernelsMinimumStretchesThePeriod(t *testing.T) {
	cases := []struct {
		vcpu, speed    float64
		period         int64
		quota, period2 int64
	}{
		{vcpu: 0.5, period: 20000, quota: 10000, period2: 20000},
		{vcpu: 0.025, period: 20000, quota: 1000, period2: 40000},
		{vcpu: 0.005, period: 20000, quota: 1000, period2: 200000},
		{vcpu: 0.0005, period: 20000, quota: 1000, period2: 1000000}, // the kernel's largest period; the quota is then 1 ms
		{vcpu: 2, period: 0, quota: 200000, period2: 100000},
		{vcpu: 1, speed: 0.8886, period: 0, quota: 88860, period2: 100000},
	}
	for _, c := range cases {
		l := Limits{VCPU: c.vcpu, CPUSpeed: c.speed, CPUPeriodUs: c.period}
		q, p := l.cpuQuota()
		if q != c.quota || p != c.period2 {
			t.Errorf("vcpu %v speed %v period %d: quota %d per %d, want %d per %d", c.vcpu, c.speed, c.period, q, p, c.quota, c.period2)
		}
		if q < minCFSQuotaUs || p > maxCFSPeriodUs {
			t.Errorf("vcpu %v: %d per %d is outside the kernel's bounds", c.vcpu, q, p)
		}
	}
}

// The period is what the sandbox's cgroup gets, not only what Limits says.
func TestSandboxCgroupEnforcesTheProfilesPeriod(t *testing.T) {
	needSandboxes(t)
	lim := Limits{Profile: ProfileLambda, VCPU: 128.0 / 1769, CPUPeriodUs: 20000}
	cg, err := NewCgroup("faascope-test-cpuperiod", "p", lim)
	if err != nil {
		t.Fatal(err)
	}
	defer RemoveParentCgroups("faascope-test-cpuperiod")
	defer cg.Remove()
	var quota, period string
	if cg.V2() {
		f := strings.Fields(cg.read("", "cpu.max"))
		quota, period = f[0], f[1]
	} else {
		quota, period = cg.read("cpu", "cpu.cfs_quota_us"), cg.read("cpu", "cpu.cfs_period_us")
	}
	if quota != "1447" || period != "20000" {
		t.Errorf("cgroup quota %s per %s µs, want 1447 per 20000", quota, period)
	}
}
