package platform

import (
	"fmt"
	"math"
	"time"
)

// Profile names the resource model a sandbox imitates.
const (
	ProfileLambda    = "lambda"
	ProfileGCF       = "gcf"
	ProfileUnlimited = "unlimited"
)

// TmpKind is what backs a sandbox's /tmp.
type TmpKind string

const (
	TmpExt4  TmpKind = "ext4"  // loop-mounted ext4 image on disk, like Lambda's block device
	TmpTmpfs TmpKind = "tmpfs" // RAM-backed and charged to the sandbox's memory, like GCF
	TmpDir   TmpKind = "dir"   // a plain private directory, no size limit
)

// Limits are the resources one sandbox gets.
type Limits struct {
	Profile string  `json:"profile"`
	VCPU    float64 `json:"vcpu"` // 0 = no CPU quota
	// CPUSpeed is the provider's vCPU speed relative to the lambda profile's, from the profile's
	// calibration (cpuspeed.go): the CPU quota is VCPU × CPUSpeed; 0 = 1 (uncalibrated).
	CPUSpeed float64 `json:"cpu_speed,omitempty"`
	// CPUPeriodUs is the CFS period the quota is enforced over, from the profile's calibration
	// (cpuperiod.go); 0 = the kernel's default, 100 ms.
	CPUPeriodUs int64 `json:"cpu_period_us,omitempty"`
	// SyscallCostUs is the extra time of every system call in the sandbox, from the profile's
	// calibration (syscallcost.go); 0 = none.
	SyscallCostUs float64 `json:"syscall_cost_us,omitempty"`
	// CloseCostUs is the extra time of every close(2) in the sandbox, from the profile's
	// calibration (closecost.go); 0 = none.
	CloseCostUs float64 `json:"close_cost_us,omitempty"`
	// DeviceCPUUs is the CPU time each request to the sandbox's /tmp device costs the sandbox,
	// from the profile's calibration (devicecpu.go); 0 = none.
	DeviceCPUUs float64 `json:"device_cpu_us,omitempty"`
	// InitVCPU is the CPU the sandbox gets during INIT, from the profile's calibration
	// (initcpu.go); 0 or less than the profile's share = the share. InitOverhead is the
	// modelled time the provider spends inside INIT (initcpu.go); 0 = none.
	InitVCPU     float64       `json:"init_vcpu,omitempty"`
	InitOverhead time.Duration `json:"init_overhead_ns,omitempty"`
	MemoryBytes  int64         `json:"memory_bytes"` // 0 = no memory limit
	TmpKind      TmpKind       `json:"tmp_kind"`
	TmpBytes     int64         `json:"tmp_bytes"` // 0 = no size limit
	// TmpIO throttles the /tmp device (an ext4 /tmp's loop device), from the profile's
	// calibration (calibration.go); zero = unthrottled.
	TmpIO BlockIO `json:"tmp_io"`
	// ModelledColdStart is the cold-start cost the profile adds on purpose, on top of what the
	// platform's machinery costs: the provider's time before the runtime's init that the local
	// machinery does not spend (placement, image fetch, microVM boot), from the profile's
	// calibration (Calibration.LimitsFor: a fixed part plus the package's fetch). It is 0
	// without a calibration: a cold start then costs only what the machinery costs
	// (docs/platform.md, "What a cold start and a warm invoke cost"). The delay is served before
	// the sandbox is made, reported as its own step ("modelled" in X-Faascope-Setup-Steps,
	// X-Faascope-Modelled-Ms) and counted in the set-up, never in the runtime's Init Duration.
	ModelledColdStart time.Duration `json:"modelled_cold_start_ns"`
}

// lambdaMBPerVCPU and gcfTiers are generated from the cpu-tiers table, the one source Python
// reads too (src/faascope/calibration/tables/cpu-tiers@*.json; scripts/gen_cpu_tiers.py).
//go:generate python3 ../../scripts/gen_cpu_tiers.py

const mib = 1 << 20

// LimitsFor derives a sandbox's resource model from a function's configuration, uncalibrated
// (Calibration.LimitsFor adds what a profile's calibration sets).
func LimitsFor(profile string, memoryMB, ephemeralMB int) (Limits, error) {
	switch profile {
	case ProfileLambda:
		return Limits{
			Profile:     profile,
			VCPU:        math.Round(float64(memoryMB)/lambdaMBPerVCPU*10000) / 10000,
			MemoryBytes: int64(memoryMB) * mib,
			TmpKind:     TmpExt4,
			TmpBytes:    int64(ephemeralMB) * mib,
		}, nil
	case ProfileGCF:
		vcpu, ok := gcfVCPU(memoryMB)
		if !ok {
			return Limits{}, fmt.Errorf("MemorySize %d MB is above the largest Cloud Functions tier (32768 MB)", memoryMB)
		}
		// /tmp is an in-memory file system whose pages count against the memory limit: sizing it
		// at the limit lets the cgroup, not the tmpfs, decide, as it does on GCF.
		return Limits{Profile: profile, VCPU: vcpu, MemoryBytes: int64(memoryMB) * mib,
			TmpKind: TmpTmpfs, TmpBytes: int64(memoryMB) * mib}, nil
	case ProfileUnlimited:
		return Limits{Profile: profile, TmpKind: TmpDir}, nil
	}
	return Limits{}, fmt.Errorf("unknown profile %q (allowed: lambda, gcf, unlimited)", profile)
}

// gcfVCPU returns the CPU of the smallest tier that holds memoryMB, as GCF rounds memory up.
func gcfVCPU(memoryMB int) (float64, bool) {
	for _, t := range gcfTiers {
		if memoryMB <= t.MemoryMB {
			return t.VCPU, true
		}
	}
	return 0, false
}
