package platform

import (
	"bytes"
	"os"
	"path/filepath"
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

// maxLogFileBytes bounds a function's log file (<logs>/<name>.log). A write that would take it
// past the bound first rotates it to <name>.log.1, replacing the previous one, so the host keeps
// the last 16 to 32 MiB of what a function printed, however much it prints (a function printing
// 1 GiB used to leave 1 GiB), and the two files go with DeleteFunction. A variable so tests can
// lower it.
var maxLogFileBytes int64 = 16 << 20

// logPath is the log file of a function's instances (one per name).
func (p *Platform) logPath(name string) string { return filepath.Join(p.logDir, name+".log") }

// functionLogs shares one append-only descriptor per log file among the instances writing to it
// (a function's instances all write <logs>/<function>.log): one per instance was a descriptor
// per warm sandbox. Each copy of a sandbox's output is one write(2) with O_APPEND, as before.
type functionLogs struct {
	mu    sync.Mutex
	files map[string]*sharedLog
}

// sharedLog is one log file and its holders. Writes never fail (a log the host cannot write
// loses lines, but must not stop the function whose output is copied through it).
type sharedLog struct {
	path string
	refs int        // under functionLogs.mu
	mu   sync.Mutex // the rest
	f    *os.File   // nil once the function's log was deleted, or the file could not be reopened
	size int64
}

// open returns the log at path for appending, opened once for all its holders, and the func
// that lets go of it (the last one closes it). A file that cannot be opened is (nil, no-op).
func (l *functionLogs) open(path string) (*sharedLog, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.files[path]
	if s == nil {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, func() {}
		}
		s = &sharedLog{path: path, f: f}
		if fi, err := f.Stat(); err == nil {
			s.size = fi.Size() // a platform restarted on the same data appends
		}
		if l.files == nil {
			l.files = map[string]*sharedLog{}
		}
		l.files[path] = s
	}
	s.refs++
	var once sync.Once
	return s, func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if s.refs--; s.refs == 0 {
				s.mu.Lock()
				if s.f != nil {
					s.f.Close()
					s.f = nil
				}
				s.mu.Unlock()
				if l.files[path] == s {
					delete(l.files, path)
				}
			}
		})
	}
}

func (s *sharedLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil && s.size > 0 && s.size+int64(len(p)) > maxLogFileBytes {
		s.rotate()
	}
	if s.f != nil {
		n, _ := s.f.Write(p)
		s.size += int64(n)
	}
	return len(p), nil
}

// rotate moves the full file to path.1 (rename replaces the previous one) and starts a new one.
func (s *sharedLog) rotate() {
	os.Rename(s.path, s.path+".1")
	f, err := os.OpenFile(s.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o600)
	s.f.Close()
	s.f, s.size = f, 0
	if err != nil {
		s.f = nil
	}
}

// remove deletes the log at path and its rotated part; instances still writing to it (a
// deleted function's, until they are retired) write nowhere, and the next open starts afresh.
func (l *functionLogs) remove(path string) {
	l.mu.Lock()
	defer l.mu.Unlock() // held across the unlinks, so an open of the path waits for them
	if s := l.files[path]; s != nil {
		delete(l.files, path)
		s.mu.Lock()
		if s.f != nil {
			s.f.Close()
			s.f = nil
		}
		s.mu.Unlock()
	}
	os.Remove(path)
	os.Remove(path + ".1")
}

// dropLog deletes a deleted function's log, unless a function of the same name lives on in
// another region (the name's log is theirs too).
func (p *Platform) dropLog(key fnKey) {
	p.mu.Lock()
	for k := range p.functions {
		if k.Name == key.Name {
			p.mu.Unlock()
			return
		}
	}
	p.mu.Unlock()
	p.logFiles.remove(p.logPath(key.Name))
}
