package platform

import (
	"math"
	"testing"
)

// The packaged gcf table's cpu_speed scales the gcf profile's CPU quota; lambda's is the reference.
func TestCPUSpeedScalesTheQuota(t *testing.T) {
	cal, tables := packagedCalibration(t)
	speed := tables[ProfileGCF].Entries[keyCPUSpeed].Value
	if speed <= 0 || speed >= 1 {
		t.Fatalf("gcf cpu_speed %v: the thesis's GCF urandom writes were slower than Lambda's", speed)
	}
	gcf, err := cal.LimitsFor(ProfileGCF, 2048, 512, 0)
	if err != nil {
		t.Fatal(err)
	}
	if gcf.VCPU != 1 || math.Abs(gcf.quotaVCPU()-speed) > 1e-12 {
		t.Errorf("gcf 2048 MB: vCPU %v (GCF's tier, unchanged), quota %v vCPU, want %v", gcf.VCPU, gcf.quotaVCPU(), speed)
	}
	lam, _ := cal.LimitsFor(ProfileLambda, 2048, 512, 0)
	if lam.CPUSpeed != 0 || lam.quotaVCPU() != lam.VCPU {
		t.Errorf("lambda: speed %v, quota %v vCPU: the reference is never scaled", lam.CPUSpeed, lam.quotaVCPU())
	}
	// uncalibrated: the quota is the vCPU
	if raw, _ := LimitsFor(ProfileGCF, 2048, 512); raw.quotaVCPU() != 1 {
		t.Errorf("uncalibrated gcf quota %v", raw.quotaVCPU())
	}
}
