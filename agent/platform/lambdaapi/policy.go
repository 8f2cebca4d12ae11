package lambdaapi

import (
	"net/http"
	"regexp"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of resource-based policies (AddPermission, GetPolicy, RemovePermission; policy.go
// of the core).

// AWS's model constraints, quoted in its ValidationException messages (recorded).
var (
	statementIDRE         = regexp.MustCompile(`^[a-zA-Z0-9-_]+$`)
	statementIDPattern    = `([a-zA-Z0-9-_]+)`
	policyQualifierRE     = regexp.MustCompile(`^(\$(LATEST(\.PUBLISHED)?)|[a-zA-Z0-9-_$]+)$`)
	policyQualifierPatten = `\$(LATEST(\.PUBLISHED)?)|[a-zA-Z0-9-_$]+`
)

// policyRef parses FunctionName and Qualifier of a policy operation, whose qualifier pattern is
// wider than Invoke's ("valid-with-$" passes the model and is then not found).
func policyRef(r *http.Request) (platform.FunctionRef, error) {
	q := r.URL.Query().Get("Qualifier")
	if q != "" && !policyQualifierRE.MatchString(q) {
		return platform.FunctionRef{}, platform.ErrValidation(q, "qualifier", "Member must satisfy regular expression pattern: "+policyQualifierPatten)
	}
	ref, err := platform.ParseFunctionRef(r.PathValue("name"), "", platform.RequestRegion(r))
	if err != nil {
		return ref, err
	}
	if q != "" {
		if ref.Qualifier != "" && ref.Qualifier != q {
			return ref, platform.ErrInvalid("The derived qualifier from the function name does not match the specified qualifier.")
		}
		ref.Qualifier = q
	}
	return ref, nil
}

func (a *api) addPermission(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		StatementId         string `json:"StatementId"`
		Action              string `json:"Action"`
		Principal           string `json:"Principal"`
		SourceArn           string `json:"SourceArn"`
		SourceAccount       string `json:"SourceAccount"`
		EventSourceToken    string `json:"EventSourceToken"`
		PrincipalOrgID      string `json:"PrincipalOrgID"`
		FunctionUrlAuthType string `json:"FunctionUrlAuthType"`
		RevisionId          string `json:"RevisionId"`
	}
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	if !statementIDRE.MatchString(req.StatementId) {
		return response{}, platform.ErrValidation(req.StatementId, "statementId", "Member must satisfy regular expression pattern: "+statementIDPattern)
	}
	if req.Action == "" || req.Principal == "" {
		return response{}, platform.ErrInvalid("Action and Principal are required")
	}
	ref, err := policyRef(r)
	if err != nil {
		return response{}, err
	}
	st, err := a.p.AddPermission(ref, platform.PermissionInput{
		StatementId: req.StatementId, Action: req.Action, Principal: req.Principal,
		SourceArn: req.SourceArn, SourceAccount: req.SourceAccount, PrincipalOrgID: req.PrincipalOrgID,
		EventSourceToken: req.EventSourceToken, FunctionUrlAuthType: req.FunctionUrlAuthType, RevisionId: req.RevisionId,
	})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, map[string]string{"Statement": st}), nil
}

func (a *api) getPolicy(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := policyRef(r)
	if err != nil {
		return response{}, err
	}
	policy, rev, err := a.p.GetPolicy(ref)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, map[string]string{"Policy": policy, "RevisionId": rev}), nil
}

func (a *api) removePermission(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := policyRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.RemovePermission(ref, r.PathValue("sid"), r.URL.Query().Get("RevisionId")); err != nil {
		return response{}, err
	}
	return noContent(), nil
}
