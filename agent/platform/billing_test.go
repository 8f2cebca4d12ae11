package platform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"
)

// packagedPriceTablesDir is where faascope's cost model keeps its price tables (one source of
// the billing rule).
const packagedPriceTablesDir = "../../src/faascope/cost/tables"

var reportRe = regexp.MustCompile(`Duration: ([0-9.]+) ms\tBilled Duration: ([0-9]+) ms.*?(?:Init Duration: ([0-9.]+) ms)?\t\n$`)

func reportFields(t *testing.T, m invokeMeta) (dur, init float64, billed int64) {
	t.Helper()
	got := reportRe.FindStringSubmatch(string(logText(m)))
	if got == nil {
		t.Fatalf("no REPORT line in %q", logText(m))
	}
	dur, _ = strconv.ParseFloat(got[1], 64)
	billed, _ = strconv.ParseInt(got[2], 10, 64)
	if got[3] != "" {
		init, _ = strconv.ParseFloat(got[3], 64)
	}
	return dur, init, billed
}

// The case: a cold custom-runtime invocation billed 1 ms with Init Duration 5.38 ms.
func TestColdReportBillsInit(t *testing.T) {
	cold := invokeMeta{RequestID: "r", Version: "$LATEST", MemoryMB: 128, Cold: true,
		Init: 5_380_000 * time.Nanosecond, Duration: 620_001 * time.Nanosecond}
	dur, init, billed := reportFields(t, cold)
	if init != 5.38 || billed < int64(init+dur) || float64(billed) < init+dur {
		t.Fatalf("cold: Duration %.2f + Init %.2f ms billed %d ms, want >= the sum", dur, init, billed)
	}
	if billed != 7 { // 6.000001 ms started the 7th millisecond
		t.Errorf("cold: billed %d ms, want ceil(5.38 + 0.620001) = 7", billed)
	}
	// a warm invocation bills its duration only (an Init left over from the instance's start is not billed again)
	warm := cold
	warm.Cold = false
	if _, init, billed := reportFields(t, warm); init != 0 || billed != 1 {
		t.Errorf("warm: billed %d ms (init %.2f), want 1 ms", billed, init)
	}
	for _, c := range []struct {
		init, dur time.Duration
		want      int64
	}{{0, 0, 0}, {0, time.Millisecond, 1}, {0, time.Millisecond + 1, 2}, {time.Millisecond, time.Millisecond, 2},
		{999_999, 1, 1}, {999_999, 2, 2}} {
		if got := billedMs(c.init, c.dur); got != c.want {
			t.Errorf("billedMs(%v, %v) = %d, want %d", c.init, c.dur, got, c.want)
		}
	}
}

// The billing rule's one source is the newest aws_lambda price table; these constants follow it.
func TestBillingRuleIsThePriceTables(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(packagedPriceTablesDir, "aws_lambda@*.json"))
	if len(files) == 0 {
		t.Fatalf("no aws_lambda price table in %s", packagedPriceTablesDir)
	}
	sort.Strings(files)
	b, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		t.Fatal(err)
	}
	var tab struct {
		Prices map[string]float64 `json:"prices"`
	}
	if err := json.Unmarshal(b, &tab); err != nil {
		t.Fatal(err)
	}
	ib, ok := tab.Prices["init_billed"]
	if !ok {
		t.Fatalf("%s has no prices.init_billed", files[len(files)-1])
	}
	if (ib == 1) != billsInit || (ib != 0 && ib != 1) {
		t.Errorf("%s: init_billed %v, platform billsInit %v", files[len(files)-1], ib, billsInit)
	}
	if g := tab.Prices["granularity_ms"]; time.Duration(g*float64(time.Millisecond)) != billingGranularity {
		t.Errorf("%s: granularity_ms %v, platform %v", files[len(files)-1], g, billingGranularity)
	}
}
