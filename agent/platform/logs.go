package platform

import (
	"bytes"
	"sync"
)

// logBuffer keeps the tail of a sandbox's output so an invocation can return what it printed
// (Invoke with LogType=Tail).
type logBuffer struct {
	mu    sync.Mutex
	buf   []byte
	total int64 // bytes ever written, so callers can take what came after a mark
	limit int
}

func newLogBuffer(limit int) *logBuffer { return &logBuffer{limit: limit} }

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - l.limit; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	l.total += int64(len(p))
	return len(p), nil
}

// Mark is a position to read from later.
func (l *logBuffer) Mark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Since returns what was written after mark (as much as the buffer still holds).
func (l *logBuffer) Since(mark int64) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.total - mark
	if n > int64(len(l.buf)) {
		n = int64(len(l.buf))
	}
	return bytes.Clone(l.buf[int64(len(l.buf))-n:])
}
