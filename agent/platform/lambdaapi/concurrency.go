package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of reserved concurrency (PutFunctionConcurrency, GetFunctionConcurrency,
// DeleteFunctionConcurrency; concurrency.go of the core).

func (a *api) putFunctionConcurrency(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		ReservedConcurrentExecutions *int `json:"ReservedConcurrentExecutions"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	if req.ReservedConcurrentExecutions == nil {
		return response{}, platform.ErrInvalid("ReservedConcurrentExecutions is required")
	}
	ref, err := functionRef(r)
	if err == nil {
		err = platform.UnqualifiedOnly(ref)
	}
	if err != nil {
		return response{}, err
	}
	n, err := a.p.PutFunctionConcurrency(ref.Key(), *req.ReservedConcurrentExecutions)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]int{"ReservedConcurrentExecutions": n}), nil
}

func (a *api) getFunctionConcurrency(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	n, err := a.p.GetFunctionConcurrency(key)
	if err != nil {
		return response{}, err
	}
	out := map[string]int{} // AWS answers {} for a function without a reservation
	if n != nil {
		out["ReservedConcurrentExecutions"] = *n
	}
	return jsonResponse(http.StatusOK, out), nil
}

func (a *api) deleteFunctionConcurrency(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteFunctionConcurrency(key); err != nil {
		return response{}, err
	}
	return noContent(), nil
}
