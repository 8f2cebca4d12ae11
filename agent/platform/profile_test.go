package platform

import (
	"math"
	"testing"
)

func TestLambdaProfileScalesCPUWithMemory(t *testing.T) {
	// One vCPU per 1,769 MB (AWS Lambda Developer Guide, "Configure Lambda function memory");
	// 128 MB → 0.0724, 2048 MB → 1.1577.
	cases := map[int]float64{128: 0.0724, 256: 0.1447, 1024: 0.5789, 1769: 1, 2048: 1.1577, 10240: 5.7886}
	for mem, want := range cases {
		l, err := LimitsFor(ProfileLambda, mem, 512)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l.VCPU-want) > 1e-4 {
			t.Errorf("lambda %d MB: vcpu %.4f, want %.4f", mem, l.VCPU, want)
		}
		if l.MemoryBytes != int64(mem)<<20 || l.TmpKind != TmpExt4 || l.TmpBytes != 512<<20 {
			t.Errorf("lambda %d MB: limits %+v", mem, l)
		}
	}
}

func TestGCFProfileUsesTierTable(t *testing.T) {
	cases := map[int]float64{128: 0.083, 256: 0.167, 512: 0.333, 1024: 0.583, 2048: 1, 4096: 2, 8192: 2, 16384: 4, 32768: 8,
		300: 0.333} // between tiers: GCF rounds memory up to the next tier
	for mem, want := range cases {
		l, err := LimitsFor(ProfileGCF, mem, 512)
		if err != nil {
			t.Fatal(err)
		}
		if l.VCPU != want || l.TmpKind != TmpTmpfs || l.TmpBytes != int64(mem)<<20 {
			t.Errorf("gcf %d MB: %+v, want vcpu %v and a tmpfs of the memory size", mem, l, want)
		}
	}
	if _, err := LimitsFor(ProfileGCF, 40000, 512); err == nil {
		t.Error("gcf above 32 GiB should be refused")
	}
	if _, err := LimitsFor("azure", 128, 512); err == nil {
		t.Error("unknown profile should be refused")
	}
}

func TestLogBufferKeepsTailAndMarks(t *testing.T) {
	l := newLogBuffer(10)
	l.Write([]byte("abcdef"))
	m := l.Mark()
	l.Write([]byte("ghijkl"))
	if got := string(l.Since(m)); got != "ghijkl" {
		t.Errorf("since mark: %q", got)
	}
	l.Write([]byte("mnop"))
	if got := string(l.Since(0)); got != "ghijklmnop" {
		t.Errorf("tail: %q", got)
	}
}
