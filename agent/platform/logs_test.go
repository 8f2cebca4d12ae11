package platform

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"
)

// Issue #29: a function that printed 1 GiB left a 1 GiB log file on the host, kept after
// DeleteFunction. With the bound lowered to 64 KiB, a function printing 1 MiB leaves the last
// 64 to 128 KiB of it, in order and without a gap across the rotation, and DeleteFunction takes
// both files; a function re-created under the name logs again.
func TestFunctionLogIsRotatedAndDeletedWithTheFunction(t *testing.T) {
	defer func(n int64) { maxLogFileBytes = n }(maxLogFileBytes)
	maxLogFileBytes = 64 << 10
	tp := startPlatform(t, Config{})
	tp.createHostile("loud", 256)
	const lines = 1 << 20 / 10 // 10 bytes a line: 1 MiB
	var printed bytes.Buffer
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&printed, "%09d\n", i)
	}
	tp.ask("loud", map[string]any{"op": "print", "n": lines})
	path := tp.logPath("loud")
	last := []byte(fmt.Sprintf("%09d\n", lines-1))
	var cur, prev []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		cur, _ = os.ReadFile(path)
		if bytes.HasSuffix(cur, last) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last line never reached %s (%d bytes)", path, len(cur))
		}
	}
	prev, _ = os.ReadFile(path + ".1")
	if int64(len(cur)) > maxLogFileBytes || int64(len(prev)) > maxLogFileBytes || len(prev) == 0 {
		t.Fatalf("%s: %d bytes, .1: %d bytes; want each at most %d and a rotated part", path, len(cur), len(prev), maxLogFileBytes)
	}
	kept := append(prev, cur...)
	if int64(len(kept)) <= maxLogFileBytes || !bytes.HasSuffix(printed.Bytes(), kept) {
		t.Fatalf("the two files (%d bytes) are not the last part of what was printed", len(kept))
	}
	t.Logf("printed %d bytes, kept %d (%d + %d)", printed.Len(), len(kept), len(prev), len(cur))

	if resp, body := tp.call("DELETE", fnPath+"loud", nil, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("delete: %d %s", resp.StatusCode, body)
	}
	for _, p := range []string{path, path + ".1"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s after DeleteFunction: %v", p, err)
		}
	}
	tp.createHostile("loud", 256)
	tp.ask("loud", map[string]any{"op": "print", "n": 3})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(path); string(b) == "000000000\n000000001\n000000002\n" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the re-created function's log: %q", b)
		}
	}
}
