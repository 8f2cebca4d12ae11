package platform

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A Lambda-like sandbox's /tmp is a fresh ext4 file system of the function's ephemeral storage
// size. Formatting one (mkfs.ext4, a process and tens of milliseconds) is no part of what Lambda
// does per cold start in the same way, so the platform keeps a few images formatted ahead for
// each size recently asked for and refills them in the background: a cold start only renames
// one into its sandbox's directory. An image is used by one sandbox and removed with it, never
// reused, so no function sees another's files. A size never asked for before is formatted on
// the spot (and then kept ready).

const (
	tmpPoolPerSize  = 2 // images kept ready per size
	tmpPoolMaxSizes = 4 // sizes kept ready (the most recently asked for)
	// tmpPoolRefillDelay is how long after a take the refill starts.
	tmpPoolRefillDelay = 200 * time.Millisecond
)

type tmpPool struct {
	dir    string
	mu     sync.Mutex
	ready  map[int64][]string  // size → formatted images, ready to take
	wanted map[int64]time.Time // size → when it was last asked for
	kick   chan struct{}
	stop   chan struct{}
	wg     sync.WaitGroup
	seq    int
	closed sync.Once
	// sandboxDir is where sandboxes' images go when the pool is on the host disk (hostdisk.go):
	// on the same file system, so a take is a rename; "" = in each sandbox's own directory.
	sandboxDir string
}

// tmpImage is one sandbox's /tmp image.
type tmpImage struct{ path string }

// imageFor is where the sandbox with directory dir and id keeps its /tmp image.
func (tp *tmpPool) imageFor(dir, id string) string {
	if tp == nil || tp.sandboxDir == "" {
		return filepath.Join(dir, "tmp.ext4")
	}
	return filepath.Join(tp.sandboxDir, id+".ext4")
}

// remove deletes the image when it lives outside the sandbox's directory (which goes anyway).
func (im *tmpImage) remove(sandboxDir string) {
	if im != nil && sandboxDir != "" && filepath.Dir(im.path) != sandboxDir {
		os.Remove(im.path)
	}
}

// newTmpPool clears what an earlier run left in dir and starts the refiller.
func newTmpPool(dir string) (*tmpPool, error) {
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tp := &tmpPool{dir: dir, ready: map[int64][]string{}, wanted: map[int64]time.Time{},
		kick: make(chan struct{}, 1), stop: make(chan struct{})}
	tp.wg.Add(1)
	go tp.refill()
	return tp, nil
}

// take moves a formatted image of size bytes to dst, or formats one there if none is ready.
func (tp *tmpPool) take(dst string, size int64) (*tmpImage, error) {
	if tp == nil {
		return &tmpImage{dst}, makeExt4(dst, size)
	}
	tp.mu.Lock()
	tp.wanted[size] = time.Now()
	var src string
	if list := tp.ready[size]; len(list) > 0 {
		src, tp.ready[size] = list[len(list)-1], list[:len(list)-1]
	}
	tp.mu.Unlock()
	select {
	case tp.kick <- struct{}{}:
	default:
	}
	if src != "" {
		if err := os.Rename(src, dst); err == nil {
			return &tmpImage{dst}, nil
		}
		os.Remove(src)
	}
	return &tmpImage{dst}, makeExt4(dst, size)
}

// refill keeps tmpPoolPerSize images ready for each of the sizes most recently asked for.
func (tp *tmpPool) refill() {
	defer tp.wg.Done()
	for {
		select {
		case <-tp.stop:
			return
		case <-tp.kick:
		}
		// Not while the cold start that asked is still initialising its runtime: a mkfs at that
		// moment would take CPU from the very start being measured.
		select {
		case <-tp.stop:
			return
		case <-time.After(tmpPoolRefillDelay):
		}
		for {
			size, ok := tp.short()
			if !ok {
				break
			}
			tp.mu.Lock()
			tp.seq++
			path := filepath.Join(tp.dir, strconv.FormatInt(size, 10)+"-"+strconv.Itoa(tp.seq)+".ext4")
			tp.mu.Unlock()
			if err := makeExt4(path, size); err != nil {
				log.Printf("tmp pool: %v", err)
				os.Remove(path)
				break
			}
			tp.mu.Lock()
			tp.ready[size] = append(tp.ready[size], path)
			tp.mu.Unlock()
			select {
			case <-tp.stop:
				return
			default:
			}
		}
	}
}

// short is a size with fewer images ready than it should have, forgetting sizes beyond the
// most recent tmpPoolMaxSizes (their images are removed).
func (tp *tmpPool) short() (int64, bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for len(tp.wanted) > tmpPoolMaxSizes {
		var oldest int64
		var at time.Time
		for s, t := range tp.wanted {
			if at.IsZero() || t.Before(at) {
				oldest, at = s, t
			}
		}
		delete(tp.wanted, oldest)
		for _, p := range tp.ready[oldest] {
			os.Remove(p)
		}
		delete(tp.ready, oldest)
	}
	for s := range tp.wanted {
		if len(tp.ready[s]) < tmpPoolPerSize {
			return s, true
		}
	}
	return 0, false
}

// close stops the refiller and removes the images still ready.
func (tp *tmpPool) close() {
	if tp == nil {
		return
	}
	tp.closed.Do(func() {
		close(tp.stop)
		tp.wg.Wait()
		os.RemoveAll(tp.dir)
	})
}

func (tp *tmpPool) String() string { return fmt.Sprintf("tmp pool %s", tp.dir) }
