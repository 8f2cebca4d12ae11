package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of code signing configs (codesigning.go of the core).

type cscRequest struct {
	Description         *string                       `json:"Description"`
	AllowedPublishers   *platform.AllowedPublishers   `json:"AllowedPublishers"`
	CodeSigningPolicies *platform.CodeSigningPolicies `json:"CodeSigningPolicies"`
}

func (c cscRequest) input() platform.CodeSigningInput {
	return platform.CodeSigningInput{Description: c.Description, AllowedPublishers: c.AllowedPublishers, CodeSigningPolicies: c.CodeSigningPolicies}
}

func (a *api) createCodeSigningConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req cscRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	c, err := a.p.CreateCodeSigningConfig(platform.RequestRegion(r), req.input())
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, map[string]any{"CodeSigningConfig": c}), nil
}

func (a *api) getCodeSigningConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	c, err := a.p.GetCodeSigningConfig(r.PathValue("arn"))
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]any{"CodeSigningConfig": c}), nil
}

func (a *api) updateCodeSigningConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req cscRequest
	if err := decodeOptionalBody(rc, r, &req); err != nil {
		return response{}, err
	}
	c, err := a.p.UpdateCodeSigningConfig(r.PathValue("arn"), req.input())
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]any{"CodeSigningConfig": c}), nil
}

func (a *api) deleteCodeSigningConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	if err := a.p.DeleteCodeSigningConfig(r.PathValue("arn")); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func (a *api) listCodeSigningConfigs(_ *http.ResponseController, r *http.Request) (response, error) {
	list, next, err := a.p.ListCodeSigningConfigs(platform.RequestRegion(r), r.URL.Query().Get("Marker"), maxItems(r, 10000))
	if err != nil {
		return response{}, err
	}
	return page("CodeSigningConfigs", list, next), nil
}

func (a *api) listFunctionsByCodeSigningConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	list, next, err := a.p.ListFunctionsByCodeSigningConfig(r.PathValue("arn"), r.URL.Query().Get("Marker"), maxItems(r, 10000))
	if err != nil {
		return response{}, err
	}
	return page("FunctionArns", list, next), nil
}

func (a *api) putFunctionCodeSigningConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		CodeSigningConfigArn string `json:"CodeSigningConfigArn"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.PutFunctionCodeSigningConfig(key, req.CodeSigningConfigArn); err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"CodeSigningConfigArn": req.CodeSigningConfigArn, "FunctionName": key.Name}), nil
}

func (a *api) getFunctionCodeSigningConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	arn, err := a.p.GetFunctionCodeSigningConfig(key)
	if err != nil {
		return response{}, err
	}
	if arn == "" {
		return jsonResponse(http.StatusOK, map[string]string{}), nil // as recorded for a function without one
	}
	return jsonResponse(http.StatusOK, map[string]string{"CodeSigningConfigArn": arn, "FunctionName": key.Name}), nil
}

func (a *api) deleteFunctionCodeSigningConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteFunctionCodeSigningConfig(key); err != nil {
		return response{}, err
	}
	return noContent(), nil
}
