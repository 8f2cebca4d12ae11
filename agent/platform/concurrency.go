package platform

import (
	"fmt"
	"net/http"
)

// Reserved concurrency (PutFunctionConcurrency, GetFunctionConcurrency,
// DeleteFunctionConcurrency), enforced as Lambda enforces it: a function with reserved
// concurrency N runs at most N invocations at once and is throttled beyond (429,
// ReservedFunctionConcurrentInvocationLimitExceeded); its N are its own, taken out of the pool
// every other function shares (the unreserved pool: --concurrency minus all reservations); and
// N = 0 throttles every invocation. Lambda keeps 100 of an account's default 1,000 unreserved;
// the platform keeps the same tenth of its --concurrency (minUnreserved), so that reservations
// can be tried on a small platform too.

// errReservedThrottled is an invocation refused by its function's reserved concurrency. It is
// an errThrottled, so whoever retries throttled invocations (Event) retries it too.
var errReservedThrottled = fmt.Errorf("reserved concurrency exhausted: %w", errThrottled)

// errQuota is a concurrency request refused by the account's quota: AWS answers these
// InvalidParameterValueExceptions without the body's "Type" (test_function_concurrency_limits'
// and test_provisioned_concurrency_limits' recordings).
func errQuota(format string, args ...any) error {
	return untypedError{&apiError{http.StatusBadRequest, "InvalidParameterValueException", fmt.Sprintf(format, args...), ""}}
}

// minUnreserved is the part of the platform's concurrency no reservation may take: a tenth,
// rounded up (Lambda: 100 of 1,000).
func (p *Platform) minUnreserved() int { return (p.cfg.Concurrency + 9) / 10 }

// reservedTotal sums the reservations of all functions but except; the caller holds p.mu.
// p.reservedSum is kept up to date wherever a function is published or removed, so that an
// invocation does not walk every function.
func (p *Platform) reservedTotal(except fnKey) int {
	return p.reservedSum - reservation(p.functions[except])
}

func reservation(f *Function) int {
	if f == nil || f.ReservedConcurrency == nil {
		return 0
	}
	return *f.ReservedConcurrency
}

// UnreservedConcurrency is the pool functions without a reservation share.
func (p *Platform) UnreservedConcurrency() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.Concurrency - p.reservedTotal(fnKey{})
}

// concurrencySlot is how an admitted invocation was counted, so that it is given back to the
// same pool however the function's reservation changes meanwhile.
type concurrencySlot struct {
	key      fnKey
	reserved bool
}

// admit counts an invocation of f in, or refuses it with errReservedThrottled (its reservation
// is used up) or errThrottled (the unreserved pool is); the caller holds p.mu.
func (p *Platform) admit(f *Function) (concurrencySlot, error) {
	key := f.key()
	p.admissions++ // counted even when refused: a refused request is traffic on the path too
	if n := f.ReservedConcurrency; n != nil {
		if p.reservedInFlight[key] >= *n {
			return concurrencySlot{}, errReservedThrottled
		}
		p.reservedInFlight[key]++
		p.inFlight++
		return concurrencySlot{key: key, reserved: true}, nil
	}
	if p.unreservedInFlight >= p.cfg.Concurrency-p.reservedTotal(fnKey{}) {
		return concurrencySlot{}, errThrottled
	}
	p.unreservedInFlight++
	p.inFlight++
	return concurrencySlot{key: key}, nil
}

// leave gives an admitted invocation's slot back; the caller holds p.mu.
func (p *Platform) leave(s concurrencySlot) {
	p.inFlight--
	if !s.reserved {
		p.unreservedInFlight--
		return
	}
	if p.reservedInFlight[s.key]--; p.reservedInFlight[s.key] <= 0 {
		delete(p.reservedInFlight, s.key)
	}
}

// PutFunctionConcurrency reserves n concurrent executions for the function.
func (p *Platform) PutFunctionConcurrency(key fnKey, n int) (int, error) {
	if n < 0 {
		return 0, errInvalid("ReservedConcurrentExecutions %d must be 0 or more", n)
	}
	if !p.exists(key) {
		return 0, errNotFound(key, "$LATEST") // AWS names $LATEST here
	}
	_, err := p.replace(key, func(next *Function) error {
		p.mu.Lock()
		others := p.reservedTotal(key)
		p.mu.Unlock()
		if p.cfg.Concurrency-others-n < p.minUnreserved() {
			return errQuota("Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [%d].", p.minUnreserved())
		}
		next.ReservedConcurrency = &n
		return nil
	})
	return n, err
}

// GetFunctionConcurrency is the function's reservation, nil when it has none.
func (p *Platform) GetFunctionConcurrency(key fnKey) (*int, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, err
	}
	return f.ReservedConcurrency, nil
}

// DeleteFunctionConcurrency returns the function to the unreserved pool.
func (p *Platform) DeleteFunctionConcurrency(key fnKey) error {
	_, err := p.replace(key, func(next *Function) error {
		next.ReservedConcurrency = nil
		return nil
	})
	return err
}
