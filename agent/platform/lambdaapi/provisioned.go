package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of provisioned concurrency configs (provisioned.go of the core).

func (a *api) putProvisionedConcurrency(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		ProvisionedConcurrentExecutions *int `json:"ProvisionedConcurrentExecutions"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	if req.ProvisionedConcurrentExecutions == nil {
		return response{}, platform.ErrInvalid("ProvisionedConcurrentExecutions is required")
	}
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	st, err := a.p.PutProvisionedConcurrencyConfig(ref, *req.ProvisionedConcurrentExecutions)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusAccepted, st), nil
}

func (a *api) getProvisionedConcurrency(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	st, err := a.p.GetProvisionedConcurrencyConfig(ref)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, st), nil
}

func (a *api) deleteProvisionedConcurrency(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteProvisionedConcurrencyConfig(ref); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

// listProvisionedConcurrency is ListProvisionedConcurrencyConfigs (GET …?List=ALL).
func (a *api) listProvisionedConcurrency(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	list, next, err := a.p.ListProvisionedConcurrencyConfigs(key, r.URL.Query().Get("Marker"), maxItems(r, 50))
	if err != nil {
		return response{}, err
	}
	return page("ProvisionedConcurrencyConfigs", list, next), nil
}

// getOrListProvisionedConcurrency routes the one path of Get and List by List=ALL.
func (a *api) getOrListProvisionedConcurrency(rc *http.ResponseController, r *http.Request) (response, error) {
	if r.URL.Query().Get("List") == "ALL" {
		return a.listProvisionedConcurrency(rc, r)
	}
	return a.getProvisionedConcurrency(rc, r)
}
