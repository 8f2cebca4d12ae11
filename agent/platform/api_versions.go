package platform

import (
	"net/http"
)

// Handlers of the versions and aliases operations (versions.go): they translate, the core acts.

func (p *Platform) publishVersion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		CodeSha256  string `json:"CodeSha256"`
		Description string `json:"Description"`
		RevisionId  string `json:"RevisionId"`
	}
	if err := decodeOptionalBody(w, r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	cfg, err := p.PublishVersion(key, PublishInput{CodeSha256: req.CodeSha256, Description: req.Description, RevisionId: req.RevisionId})
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, cfg)
}

func (p *Platform) listVersions(w http.ResponseWriter, r *http.Request) {
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	list, next, err := p.ListVersions(key, r.URL.Query().Get("Marker"), maxItems(r, 10000))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writePage(w, "Versions", list, next)
}

type aliasRequest struct {
	Name            string                     `json:"Name"`
	FunctionVersion *string                    `json:"FunctionVersion"`
	Description     *string                    `json:"Description"`
	RoutingConfig   *AliasRoutingConfiguration `json:"RoutingConfig"`
	RevisionId      string                     `json:"RevisionId"`
}

func (a aliasRequest) input() AliasInput {
	return AliasInput{Name: a.Name, FunctionVersion: a.FunctionVersion, Description: a.Description,
		RoutingConfig: a.RoutingConfig, RevisionId: a.RevisionId}
}

func (p *Platform) createAlias(w http.ResponseWriter, r *http.Request) {
	var req aliasRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	a, err := p.CreateAlias(key, req.input())
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}

func (p *Platform) listAliases(w http.ResponseWriter, r *http.Request) {
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	q := r.URL.Query()
	list, next, err := p.ListAliases(key, q.Get("FunctionVersion"), q.Get("Marker"), maxItems(r, 10000))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writePage(w, "Aliases", list, next)
}

func (p *Platform) getAlias(w http.ResponseWriter, r *http.Request) {
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	a, err := p.GetAlias(key, r.PathValue("alias"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (p *Platform) updateAlias(w http.ResponseWriter, r *http.Request) {
	var req aliasRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	in := req.input()
	in.Name = r.PathValue("alias")
	a, err := p.UpdateAlias(key, in)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (p *Platform) deleteAlias(w http.ResponseWriter, r *http.Request) {
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if err := p.DeleteAlias(key, r.PathValue("alias")); err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodeOptionalBody is decodeBody for an operation whose body may be empty (PublishVersion).
func decodeOptionalBody(w http.ResponseWriter, r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	err := decodeBody(w, r, v)
	if ie, ok := err.(*invalidParameterError); ok && ie.msg == "malformed JSON: unexpected end of JSON input" {
		return nil // a chunked empty body
	}
	return err
}
