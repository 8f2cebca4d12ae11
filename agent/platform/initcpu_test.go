package platform

import "testing"

// INIT runs at init_vcpu where that is more than the profile's share, over the same period; the
// share's quota binds after (cpuQuota).
func TestInitCPUQuotaIsRaisedOnlyAboveTheShare(t *testing.T) {
	small := Limits{VCPU: 0.0724, CPUPeriodUs: 20000, InitVCPU: 1}
	if q, p := small.initCPUQuota(); q != 20000 || p != 20000 {
		t.Fatalf("128 MB INIT quota %d/%d, want a whole vCPU (20000/20000)", q, p)
	}
	if q, p := small.cpuQuota(); q != 1448 || p != 20000 {
		t.Fatalf("128 MB steady quota %d/%d, want 1448/20000", q, p)
	}
	big := Limits{VCPU: 1.158, CPUPeriodUs: 20000, InitVCPU: 1}
	qi, pi := big.initCPUQuota()
	qs, ps := big.cpuQuota()
	if qi != qs || pi != ps {
		t.Fatalf("2048 MB: INIT %d/%d differs from the share %d/%d, which is more than init_vcpu", qi, pi, qs, ps)
	}
	none := Limits{VCPU: 0.0724, CPUPeriodUs: 20000}
	qi, _ = none.initCPUQuota()
	qs, _ = none.cpuQuota()
	if qi != qs {
		t.Fatalf("without init_vcpu INIT's quota %d differs from the share's %d", qi, qs)
	}
	// gcf's speed scales the share, not INIT's vCPU
	gcf := Limits{VCPU: 0.083, CPUSpeed: 0.8886, InitVCPU: 1}
	if q, p := gcf.initCPUQuota(); q != 100000 || p != 100000 {
		t.Fatalf("INIT quota %d/%d, want 100000/100000", q, p)
	}
}
