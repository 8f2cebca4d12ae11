package platform

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"testing"
)

// The Go platform and the Python duration model (faascope.designs.estimate.cpu_share,
// faascope.designs.model_inputs.Inputs.tmp_memory_factor / tmp_limits) each compute a
// sandbox's CPU and /tmp limits from its memory. This test writes what Go computes on a grid of
// memory sizes to testdata/profile_shares.json (go test ./platform -run TestProfileSharesGrid
// -update-shares) and fails when Go's values leave the committed file;
// tests/calibration/test_cpu_tiers.py fails when Python's do. Together: the two sides agree.
var updateShares = flag.Bool("update-shares", false, "rewrite "+profileSharesFile+" from the Go side")

const profileSharesFile = "testdata/profile_shares.json"

// sharesGridMB: every GCF tier, sizes between tiers, Lambda's whole-vCPU point and its
// neighbours, the /tmp model's knee (2048 MB) and sizes on either side.
var sharesGridMB = []int{128, 129, 192, 256, 300, 512, 640, 1000, 1024, 1536, 1769, 1770, 2047, 2048, 2049,
	3008, 4096, 6000, 8192, 10240, 16384, 32768}

type profileShare struct {
	MemoryMB        int     `json:"memory_mb"`
	LambdaVCPU      float64 `json:"lambda_vcpu"`       // LimitsFor(lambda): MB / 1769, 4 decimals
	GCFVCPU         float64 `json:"gcf_vcpu"`          // LimitsFor(gcf): the tier's
	LambdaTmpFactor float64 `json:"lambda_tmp_factor"` // tmpMemoryScale.factor, packaged table
	LambdaTmpIO     BlockIO `json:"lambda_tmp_io"`     // Calibration.LimitsFor(lambda).TmpIO
}

type profileShares struct {
	Note string         `json:"note"`
	Grid []profileShare `json:"grid"`
}

func TestProfileSharesGrid(t *testing.T) {
	cal, _ := packagedCalibration(t)
	got := profileShares{Note: "Go's values (agent/platform/cputiers_test.go); Python must match them " +
		"(tests/calibration/test_cpu_tiers.py). Regenerate, in agent/: go test ./platform -run " +
		"TestProfileSharesGrid -update-shares"}
	for _, m := range sharesGridMB {
		lam, err := cal.LimitsFor(ProfileLambda, m, 512, 0)
		if err != nil {
			t.Fatal(err)
		}
		gcf, err := LimitsFor(ProfileGCF, m, 512)
		if err != nil {
			t.Fatal(err)
		}
		got.Grid = append(got.Grid, profileShare{MemoryMB: m, LambdaVCPU: lam.VCPU, GCFVCPU: gcf.VCPU,
			LambdaTmpFactor: cal.profile(ProfileLambda).tmpScale.factor(m), LambdaTmpIO: lam.TmpIO})
	}
	if *updateShares {
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(profileSharesFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(profileSharesFile)
	if err != nil {
		t.Fatal(err)
	}
	var want profileShares
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Grid) != len(got.Grid) {
		t.Fatalf("%s has %d sizes, the grid %d (rerun with -update-shares)", profileSharesFile, len(want.Grid), len(got.Grid))
	}
	for i, g := range got.Grid {
		w := want.Grid[i]
		if g.MemoryMB != w.MemoryMB || g.LambdaVCPU != w.LambdaVCPU || g.GCFVCPU != w.GCFVCPU ||
			math.Abs(g.LambdaTmpFactor-w.LambdaTmpFactor) > 1e-12 || g.LambdaTmpIO != w.LambdaTmpIO {
			t.Errorf("%d MB: Go computes %+v, %s has %+v (the Python side is checked against the file: "+
				"change both, then -update-shares)", g.MemoryMB, g, profileSharesFile, w)
		}
	}
}
