package lambdaapi

import "net/http"

// Handlers of the recursion config (recursion.go of the core).

func (a *api) putFunctionRecursionConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		RecursiveLoop string `json:"RecursiveLoop"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	loop, err := a.p.PutFunctionRecursionConfig(key, req.RecursiveLoop)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"RecursiveLoop": loop}), nil
}

func (a *api) getFunctionRecursionConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	loop, err := a.p.GetFunctionRecursionConfig(key)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"RecursiveLoop": loop}), nil
}
