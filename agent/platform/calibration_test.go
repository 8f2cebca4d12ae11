package platform

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// packagedTablesDir is where the Python package keeps the calibration tables (one source).
const packagedTablesDir = "../../src/faascope/calibration/tables"

// packagedCalibration builds the --calibration file from the packaged tables (the newest version
// of each platform table), as faascope.calibration.platform_calibration does without an override.
func packagedCalibration(t testing.TB) (*Calibration, map[string]CalibrationTable) {
	t.Helper()
	tables := map[string]CalibrationTable{}
	for profile, name := range profileTables {
		files, _ := filepath.Glob(filepath.Join(packagedTablesDir, name+"@*.json"))
		if len(files) == 0 {
			t.Fatalf("no packaged table %s in %s", name, packagedTablesDir)
		}
		sort.Strings(files)
		b, err := os.ReadFile(files[len(files)-1])
		if err != nil {
			t.Fatal(err)
		}
		var tab CalibrationTable
		if err := json.Unmarshal(b, &tab); err != nil {
			t.Fatalf("%s: %v", files[len(files)-1], err)
		}
		tables[profile] = tab
	}
	b, _ := json.Marshal(calibrationFile{Profiles: tables})
	c, err := parseCalibration(b)
	if err != nil {
		t.Fatal(err)
	}
	return c, tables
}

// Every key a packaged platform table has is one the platform reads, and every figure the
// platform applies comes out of the tables: a key renamed on either side fails here.
func TestPackagedCalibrationTables(t *testing.T) {
	cal, tables := packagedCalibration(t)
	known := map[string]bool{}
	for _, k := range []string{keyTmpReadBps, keyTmpWriteBps, keyTmpReadIOPS, keyTmpWriteIOPS, keyNetBucketSize,
		keyNetOneTimeBurst, keyNetRefillRate, keyNetPeakRate, keyColdFixed, keyColdFetchRate, keySharedReadBps,
		keySharedWriteBps, keySharedReadIOPS, keySharedWriteIOPS, keyTmpLimitsMemory, keyTmpMemoryExponent, keyHostTmpReadBps, keyHostTmpWriteBps, keyHostTmpReadIOPS,
		keyHostTmpWriteIOPS, keyFrontEnd, keyCPUSpeed, keyCPUPeriod, keySyscallCost, keyCloseCost, keyDeviceCPU, keyInitVCPU, keyInitOverhead} {
		known[k] = true
	}
	for profile, tab := range tables {
		for k := range tab.Entries {
			if !known[k] {
				t.Errorf("%s: entry %q is read by no code (renamed?)", tab.Table, k)
			}
		}
		if cal.Info()[profile].Table != tab.Table || cal.Info()[profile].Version != tab.Version {
			t.Errorf("%s: status names %+v", profile, cal.Info()[profile])
		}
	}
	lam := cal.profile(ProfileLambda)
	// The fitted /tmp read limits follow from the two FIT cells' published medians
	// (CALIBRATION: DIRECT_READ, 2048 MB, 1,024,000,000 B at 512 B and at 131,072 B), read from
	// the published-anchors table, where they are written once (faascope.calibration.fits).
	const iopsCell, bpsCell = "thesis_lambda_direct_read_m2048_f1024000000_io512", "thesis_lambda_direct_read_m2048_f1024000000_io131072"
	reads, readsMedian := publishedAnchor(t, iopsCell+"_ops"), publishedAnchor(t, iopsCell+"_median")
	if want := int64(math.Round(reads / readsMedian)); lam.tmpIO.ReadIOPS != want {
		t.Errorf("tmp read IOPS %d, want %d (%.0f reads in %g s)", lam.tmpIO.ReadIOPS, want, reads, readsMedian)
	}
	bpsMedian := publishedAnchor(t, bpsCell+"_median")
	if want := 1_024_000_000 / bpsMedian; math.Abs(float64(lam.tmpIO.ReadBps)-want) > 1 {
		t.Errorf("tmp read bps %d, want %.0f (1,024,000,000 B in %g s)", lam.tmpIO.ReadBps, want, bpsMedian)
	}
	if lam.tmpIO.WriteBps <= 0 || lam.tmpIO.WriteIOPS <= 0 {
		t.Errorf("tmp write limits %+v", lam.tmpIO)
	}
	// Skyrise's bucket: ~150 MiB refilling at 75 MiB/s (so in 2 s), ~150 MiB one-off, ~1.2 GiB/s.
	net, ok := cal.netShape(ProfileLambda)
	if !ok || net.Size != 150<<20 || net.RefillTime != 2*time.Second || net.OneTimeBurst != 150<<20 ||
		math.Abs(float64(net.PeakBps)-1.2*(1<<30)) > 1 {
		t.Errorf("lambda net shape %+v", net)
	}
	if ns, err := ParseNetShape("lambda", cal); err != nil || ns.In != net || ns.Out != net {
		t.Errorf("ParseNetShape(lambda) = %+v, %v", ns, err)
	}
	// The default, "profile": each sandbox its own profile's bucket, none where a profile has none.
	if ns, err := NetShapeFor(NetShapeProfile, ProfileLambda, cal); err != nil || ns.In != net || ns.Out != net {
		t.Errorf("NetShapeFor(profile, lambda) = %+v, %v", ns, err)
	}
	for _, prof := range []string{ProfileUnlimited, "no-such-profile"} {
		if ns, err := NetShapeFor(NetShapeProfile, prof, cal); err != nil || ns != (NetShape{}) {
			t.Errorf("NetShapeFor(profile, %s) = %+v, %v, want no shaping", prof, ns, err)
		}
	}
	if ns, err := NetShapeFor(NetShapeProfile, ProfileLambda, nil); err != nil || ns != (NetShape{}) {
		t.Errorf("NetShapeFor(profile, lambda) without a calibration = %+v, %v, want no shaping", ns, err)
	}
	if b := cal.sharedBudget(ProfileLambda); b.ReadBps <= 0 || b.WriteBps <= 0 || b.ReadIOPS <= 0 || b.WriteIOPS <= 0 {
		t.Errorf("shared budget %+v", b)
	}
	// The modelled cold start is the fixed part plus the package at the fetch rate.
	l0, _ := cal.LimitsFor(ProfileLambda, 2048, 512, 0)
	l1, _ := cal.LimitsFor(ProfileLambda, 2048, 512, 15_000_000)
	if l0.ModelledColdStart <= 0 || l0.TmpIO != lam.tmpIO {
		t.Errorf("lambda limits %+v", l0)
	}
	if d := l1.ModelledColdStart - l0.ModelledColdStart; d != time.Duration(15e6/lam.fetchBps*float64(time.Second)) || d <= 0 {
		t.Errorf("15 MB package adds %v", d)
	}
	// GCF: /tmp in memory, nothing to throttle; a cold start of its own.
	g, _ := cal.LimitsFor(ProfileGCF, 512, 512, 0)
	if !g.TmpIO.Zero() || g.TmpKind != TmpTmpfs || g.ModelledColdStart <= l0.ModelledColdStart {
		t.Errorf("gcf limits %+v (lambda's cold start %v)", g, l0.ModelledColdStart)
	}
	if _, ok := cal.netShape(ProfileGCF); ok {
		t.Error("gcf has a network bucket no one published")
	}
	// unlimited stays unshaped.
	u, _ := cal.LimitsFor(ProfileUnlimited, 128, 512, 50_000_000)
	if !u.TmpIO.Zero() || u.ModelledColdStart != 0 || !cal.sharedBudget(ProfileUnlimited).Zero() {
		t.Errorf("unlimited limits %+v", u)
	}
}

func TestCalibrationRefusesWrongUnitsAndProfiles(t *testing.T) {
	for _, bad := range []string{
		`{"profiles": {"unlimited": {"table": "platform-lambda", "entries": {}}}}`,
		`{"profiles": {"lambda": {"table": "platform-gcf", "entries": {}}}}`,
		`{"profiles": {"lambda": {"table": "platform-lambda", "entries": {"tmp_read_bps": {"value": 5, "unit": "IOPS"}}}}}`,
		`{"profiles": {"lambda": {"table": "platform-lambda", "entries": {"net_bucket_size": {"value": 5, "unit": "B"}}}}}`,
	} {
		if _, err := parseCalibration([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		} else if !strings.Contains(err.Error(), "profiles.") {
			t.Errorf("error %q does not name the profile", err)
		}
	}
}
