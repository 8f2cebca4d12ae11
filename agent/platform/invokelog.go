package platform

import (
	"fmt"
	"strings"
	"time"
)

// logText renders an invocation's log as Lambda does: START, the function's output, END, REPORT.
func logText(m invokeMeta) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "START RequestId: %s Version: %s\n", m.RequestID, m.Version)
	b.Write(m.Logs)
	fmt.Fprintf(&b, "END RequestId: %s\n", m.RequestID)
	durMs := float64(m.Duration) / 1e6
	var init time.Duration
	if m.Cold {
		init = m.Init
	}
	billed := billedMs(init, m.Duration) // billing.go: a cold start's Init Duration is billed too
	fmt.Fprintf(&b, "REPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %d ms\tMemory Size: %d MB\tMax Memory Used: %d MB",
		m.RequestID, durMs, billed, m.MemoryMB, (m.PeakBytes+(1<<20)-1)>>20)
	if m.Cold {
		fmt.Fprintf(&b, "\tInit Duration: %.2f ms", float64(m.Init)/1e6)
	}
	b.WriteString("\t\n")
	return []byte(b.String())
}
