package platform

import (
	"bytes"
	"os"
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

// functionLogs shares one append-only descriptor per log file among the instances writing to it
// (a function's instances all write <logs>/<function>.log): one per instance was a descriptor
// per warm sandbox. Each copy of a sandbox's output is one write(2) with O_APPEND, as before.
type functionLogs struct {
	mu    sync.Mutex
	files map[string]*sharedLog
}

type sharedLog struct {
	f    *os.File
	refs int
}

// open returns the file at path for appending, opened once for all its holders, and the func
// that lets go of it (the last one closes it). A file that cannot be opened is (nil, no-op).
func (l *functionLogs) open(path string) (*os.File, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.files[path]
	if s == nil {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, func() {}
		}
		if l.files == nil {
			l.files = map[string]*sharedLog{}
		}
		s = &sharedLog{f: f}
		l.files[path] = s
	}
	s.refs++
	var once sync.Once
	return s.f, func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if s.refs--; s.refs == 0 {
				s.f.Close()
				delete(l.files, path)
			}
		})
	}
}
