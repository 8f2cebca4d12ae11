package lambdaapi

import (
	"net/http"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of layer version policies (layerpolicy.go of the core).

func (a *api) addLayerVersionPermission(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		StatementId    string `json:"StatementId"`
		Action         string `json:"Action"`
		Principal      string `json:"Principal"`
		OrganizationId string `json:"OrganizationId"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	if !statementIDRE.MatchString(req.StatementId) {
		return response{}, platform.ErrValidation(req.StatementId, "statementId", "Member must satisfy regular expression pattern: "+statementIDPattern)
	}
	v, err := layerVersionNumber(r)
	if err != nil {
		return response{}, err
	}
	st, rev, err := a.p.AddLayerVersionPermission(platform.RequestRegion(r), r.PathValue("layer"), v, platform.LayerPermissionInput{
		StatementId: req.StatementId, Action: req.Action, Principal: req.Principal,
		OrganizationId: req.OrganizationId, RevisionId: r.URL.Query().Get("RevisionId")})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, map[string]string{"Statement": st, "RevisionId": rev}), nil
}

func (a *api) getLayerVersionPolicy(_ *http.ResponseController, r *http.Request) (response, error) {
	v, err := layerVersionNumber(r)
	if err != nil {
		return response{}, err
	}
	policy, rev, err := a.p.GetLayerVersionPolicy(platform.RequestRegion(r), r.PathValue("layer"), v)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"Policy": policy, "RevisionId": rev}), nil
}

func (a *api) removeLayerVersionPermission(_ *http.ResponseController, r *http.Request) (response, error) {
	v, err := layerVersionNumber(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.RemoveLayerVersionPermission(platform.RequestRegion(r), r.PathValue("layer"), v, r.PathValue("sid"), r.URL.Query().Get("RevisionId")); err != nil {
		return response{}, err
	}
	return noContent(), nil
}
