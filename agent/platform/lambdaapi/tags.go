package lambdaapi

import "net/http"

// Handlers of the tags API (TagResource, UntagResource, ListTags; tags.go of the core).

func (a *api) tagResource(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		Tags map[string]string `json:"Tags"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	if err := a.p.TagResource(r.PathValue("arn"), req.Tags); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func (a *api) untagResource(_ *http.ResponseController, r *http.Request) (response, error) {
	if err := a.p.UntagResource(r.PathValue("arn"), r.URL.Query()["tagKeys"]); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func (a *api) listTags(_ *http.ResponseController, r *http.Request) (response, error) {
	tags, err := a.p.ListTags(r.PathValue("arn"))
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]any{"Tags": tags}), nil
}
