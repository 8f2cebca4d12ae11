package cgroupfile

import "testing"

// A hybrid host's file (v1 hierarchies and the v2 line), as cgroup v1 machines with systemd
// write it, and a pure v2 one.
func TestParse(t *testing.T) {
	v1, v2, hasV2 := Parse([]byte("12:pids:/faascope/a\n4:cpu,cpuacct:/faascope/a\n1:name=systemd:/init.scope\n0::/init.scope\n"))
	if v1["cpu"] != "/faascope/a" || v1["cpuacct"] != "/faascope/a" || v1["pids"] != "/faascope/a" {
		t.Fatalf("v1 = %v", v1)
	}
	if v1["name=systemd"] != "/init.scope" || !hasV2 || v2 != "/init.scope" {
		t.Fatalf("v1 = %v, v2 = %q %v", v1, v2, hasV2)
	}
	if _, ok := v1[""]; ok {
		t.Fatalf("the v2 line became a v1 controller: %v", v1)
	}
	v1, v2, hasV2 = Parse([]byte("0::/user.slice/x\n"))
	if len(v1) != 0 || !hasV2 || v2 != "/user.slice/x" {
		t.Fatalf("v2 only: %v %q %v", v1, v2, hasV2)
	}
	if v1, _, hasV2 = Parse(nil); len(v1) != 0 || hasV2 {
		t.Fatalf("empty: %v %v", v1, hasV2)
	}
}
