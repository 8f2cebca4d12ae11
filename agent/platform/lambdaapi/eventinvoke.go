package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of event invoke configs (eventinvoke.go of the core).

func (a *api) putEventInvokeConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	return a.setEventInvokeConfig(rc, r, a.p.PutFunctionEventInvokeConfig)
}

func (a *api) updateEventInvokeConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	return a.setEventInvokeConfig(rc, r, a.p.UpdateFunctionEventInvokeConfig)
}

func (a *api) setEventInvokeConfig(rc *http.ResponseController, r *http.Request,
	set func(platform.FunctionRef, platform.EventInvokeInput) (platform.EventInvokeConfig, error)) (response, error) {
	var req struct {
		MaximumRetryAttempts     *int                        `json:"MaximumRetryAttempts"`
		MaximumEventAgeInSeconds *int                        `json:"MaximumEventAgeInSeconds"`
		DestinationConfig        *platform.DestinationConfig `json:"DestinationConfig"`
	}
	if err := decodeOptionalBody(rc, r, &req); err != nil {
		return response{}, err
	}
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	c, err := set(ref, platform.EventInvokeInput{MaximumRetryAttempts: req.MaximumRetryAttempts,
		MaximumEventAgeInSeconds: req.MaximumEventAgeInSeconds, DestinationConfig: req.DestinationConfig})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, c), nil
}

func (a *api) getEventInvokeConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	c, err := a.p.GetFunctionEventInvokeConfig(ref)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, c), nil
}

func (a *api) deleteEventInvokeConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteFunctionEventInvokeConfig(ref); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func (a *api) listEventInvokeConfigs(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	list, next, err := a.p.ListFunctionEventInvokeConfigs(key, r.URL.Query().Get("Marker"), maxItems(r, 50))
	if err != nil {
		return response{}, err
	}
	return page("FunctionEventInvokeConfigs", list, next), nil
}
