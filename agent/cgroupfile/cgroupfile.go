// Package cgroupfile parses /proc/<pid>/cgroup (or /proc/self/task/<tid>/cgroup): the
// platform reads it for a device thread's home groups (platform/devicecpu.go), the runtime in
// a sandbox for the groups it runs in (runtime/instance.go). One parser for both, so a format
// detail (a v1 line naming several controllers, the v2 "0::" line) is handled once.
package cgroupfile

import "strings"

// Parse reads the file's lines. v1 lines are "id:controller[,controller]:path" and give one
// entry per controller ("cpu" -> "/faascope/x"); the v2 line is "0::path". Lines of another
// shape are skipped.
func Parse(b []byte) (v1 map[string]string, v2 string, hasV2 bool) {
	v1 = map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2, hasV2 = parts[2], true
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			v1[ctrl] = parts[2]
		}
	}
	return v1, v2, hasV2
}
