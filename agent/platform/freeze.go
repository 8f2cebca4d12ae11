package platform

import (
	"log"
	"sync"
)

// Between invocations an instance's sandbox is frozen, as Lambda freezes an execution
// environment: whatever the function left running after its response (a spinner, a flush, a
// timer) stops until the next invocation is handed over, so an idle function takes no CPU from
// the host and its neighbours, and its cgroup's CPU time does not grow while it waits.
//
// The runtime itself must be frozen only once it waits in /next, exactly where Lambda freezes
// it; frozen before that, its own bookkeeping after the response would run inside the next
// measured invocation. So the instance counts the /next calls it has seen and the invocations
// it has handed over: the runtime is waiting when it has asked for one more than it got.

// idleFreezer is an instance's freeze state. The zero value is ready to use.
type idleFreezer struct {
	mu      sync.Mutex
	cond    *sync.Cond
	nexts   int  // /next calls received
	handed  int  // invocations handed to the runtime
	parked  bool // in the warm pool, no invocation claimed it
	frozen  bool
	stopped bool
}

func (f *idleFreezer) init() {
	if f.cond == nil {
		f.cond = sync.NewCond(&f.mu)
	}
}

// nextCalled is told of every /next as it arrives.
func (f *idleFreezer) nextCalled() {
	f.mu.Lock()
	f.init()
	f.nexts++
	f.cond.Broadcast()
	f.mu.Unlock()
}

// handOver is called before an invocation is given to the runtime: it thaws the sandbox first.
func (f *idleFreezer) handOver(sb *Sandbox) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.init()
	f.parked = false
	f.handed++
	if f.frozen {
		if err := sb.Cgroup.Thaw(); err != nil {
			log.Printf("thaw %s: %v", sb.ID, err)
		}
		f.frozen = false
	}
	f.cond.Broadcast()
}

// park is called when the instance goes back to the warm pool: once its runtime waits in /next
// (and unless an invocation claims it first or it is closed), the sandbox is frozen.
func (f *idleFreezer) park(sb *Sandbox) {
	if sb == nil || sb.Cgroup == nil || !sb.Cgroup.CanFreeze() {
		return
	}
	f.mu.Lock()
	f.init()
	f.parked = true
	handed := f.handed
	f.mu.Unlock()
	go func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for f.parked && !f.stopped && f.handed == handed && f.nexts <= handed {
			f.cond.Wait()
		}
		if !f.parked || f.stopped || f.handed != handed || f.frozen {
			return
		}
		select {
		case <-sb.Exited():
			return
		default:
		}
		if err := sb.Cgroup.Freeze(); err != nil {
			log.Printf("freeze %s: %v", sb.ID, err)
			return
		}
		f.frozen = true
	}()
}

// stop ends a pending park; the sandbox's destruction kills and thaws what is left.
func (f *idleFreezer) stop() {
	f.mu.Lock()
	f.init()
	f.stopped = true
	f.cond.Broadcast()
	f.mu.Unlock()
}
