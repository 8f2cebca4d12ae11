package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of the versions and aliases operations (versions.go of the core): they translate,
// the core acts.

func (a *api) publishVersion(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		CodeSha256  string `json:"CodeSha256"`
		Description string `json:"Description"`
		RevisionId  string `json:"RevisionId"`
	}
	if err := decodeOptionalBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	cfg, err := a.p.PublishVersion(key, platform.PublishInput{CodeSha256: req.CodeSha256, Description: req.Description, RevisionId: req.RevisionId})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, cfg), nil
}

func (a *api) listVersions(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	list, next, err := a.p.ListVersions(key, r.URL.Query().Get("Marker"), maxItems(r, 10000))
	if err != nil {
		return response{}, err
	}
	return page("Versions", list, next), nil
}

type aliasRequest struct {
	Name            string                              `json:"Name"`
	FunctionVersion *string                             `json:"FunctionVersion"`
	Description     *string                             `json:"Description"`
	RoutingConfig   *platform.AliasRoutingConfiguration `json:"RoutingConfig"`
	RevisionId      string                              `json:"RevisionId"`
}

func (a aliasRequest) input() platform.AliasInput {
	return platform.AliasInput{Name: a.Name, FunctionVersion: a.FunctionVersion, Description: a.Description,
		RoutingConfig: a.RoutingConfig, RevisionId: a.RevisionId}
}

func (a *api) createAlias(rc *http.ResponseController, r *http.Request) (response, error) {
	var req aliasRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	alias, err := a.p.CreateAlias(key, req.input())
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, alias), nil
}

func (a *api) listAliases(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	q := r.URL.Query()
	list, next, err := a.p.ListAliases(key, q.Get("FunctionVersion"), q.Get("Marker"), maxItems(r, 10000))
	if err != nil {
		return response{}, err
	}
	return page("Aliases", list, next), nil
}

func (a *api) getAlias(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	alias, err := a.p.GetAlias(key, r.PathValue("alias"))
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, alias), nil
}

func (a *api) updateAlias(rc *http.ResponseController, r *http.Request) (response, error) {
	var req aliasRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	in := req.input()
	in.Name = r.PathValue("alias")
	alias, err := a.p.UpdateAlias(key, in)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, alias), nil
}

func (a *api) deleteAlias(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteAlias(key, r.PathValue("alias")); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

// decodeOptionalBody is decodeBody for an operation whose body may be empty (PublishVersion).
func decodeOptionalBody(rc *http.ResponseController, r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	err := decodeBody(rc, r, v)
	// An InvalidParameterValueException of decodeBody's (its other errors' messages differ).
	if err != nil && platform.AWSError(err).Msg == "malformed JSON: unexpected end of JSON input" {
		return nil // a chunked empty body
	}
	return err
}
