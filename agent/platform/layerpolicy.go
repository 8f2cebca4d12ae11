package platform

import (
	"encoding/json"
	"slices"
)

// Layer version policies (AddLayerVersionPermission, GetLayerVersionPolicy,
// RemoveLayerVersionPermission), kept in the layer version's record (layers.go) with AWS's
// recorded answers. A layer policy has a RevisionId of its own, renewed by every change. The
// platform keeps and shows the policy but does not enforce it: it has one account, whose
// functions may use every layer it holds.

type layerPolicy struct {
	Policy     resourcePolicy `json:"policy"`
	RevisionId string         `json:"revision_id"`
}

// LayerPermissionInput is AddLayerVersionPermission's request.
type LayerPermissionInput struct {
	StatementId, Action, Principal, OrganizationId, RevisionId string
}

// errLayerVersionMissing is the policy operations' answer for a layer version that does not
// exist (recorded), not GetLayerVersion's generic one.
func errLayerVersionMissing(name string, v int64) error {
	return &notFoundError{"Layer version " + layerVersionARN(name, v) + " does not exist."}
}

// layerPrincipal is how a statement shows a layer principal: "*" as it is, an account as its
// root user (AWS's AddLayerVersionPermission: "An account ID, or * to grant layer usage
// permission to all accounts").
func layerPrincipal(p string) any {
	if accountRE.MatchString(p) {
		return map[string]string{"AWS": "arn:aws:iam::" + p + ":root"}
	}
	return p
}

// changeLayerPolicy applies change to a copy of a live layer version's policy and commits it.
func (p *Platform) changeLayerPolicy(region, layer string, version int64, change func(name string, lv *layerVersion) error) error {
	name, err := layerNameOf(region, layer)
	if err != nil {
		return err
	}
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	lv := p.liveLayerVersion(name, version)
	if lv == nil {
		return errLayerVersionMissing(name, version)
	}
	next := *lv
	if err := change(name, &next); err != nil {
		return err
	}
	if err := p.layerStore().commit(&next, nil); err != nil {
		return err
	}
	p.mu.Lock()
	p.layers[name][version] = &next
	p.mu.Unlock()
	return nil
}

// AddLayerVersionPermission adds a statement; it returns the statement (JSON) and the policy's
// new RevisionId.
func (p *Platform) AddLayerVersionPermission(region, layer string, version int64, in LayerPermissionInput) (string, string, error) {
	if in.Action != "lambda:GetLayerVersion" {
		return "", "", errValidation(in.Action, "action", "Member must satisfy regular expression pattern: lambda:GetLayerVersion")
	}
	var st PolicyStatement
	var rev string
	err := p.changeLayerPolicy(region, layer, version, func(name string, lv *layerVersion) error {
		var old []PolicyStatement
		if lv.Policy != nil {
			old = lv.Policy.Policy.Statement
			if in.RevisionId != "" && in.RevisionId != lv.Policy.RevisionId {
				return errPreconditionFailed("GetLayerPolicy")
			}
		}
		if slices.ContainsFunc(old, func(s PolicyStatement) bool { return s.Sid == in.StatementId }) {
			return errConflict("The statement id (%s) provided already exists. Please provide a new statement id, or remove the existing statement.", in.StatementId)
		}
		st = PolicyStatement{Sid: in.StatementId, Effect: "Allow", Principal: layerPrincipal(in.Principal), Action: in.Action,
			Resource: layerVersionARN(name, version)}
		if in.OrganizationId != "" {
			st.Condition = map[string]map[string]string{"StringEquals": {"aws:PrincipalOrgID": in.OrganizationId}}
		}
		rev = newRevision()
		lv.Policy = &layerPolicy{Policy: resourcePolicy{Version: "2012-10-17", ID: "default", Statement: append(slices.Clone(old), st)}, RevisionId: rev}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	b, err := json.Marshal(st)
	return string(b), rev, err
}

// GetLayerVersionPolicy is the policy (JSON) and its RevisionId.
func (p *Platform) GetLayerVersionPolicy(region, layer string, version int64) (string, string, error) {
	name, err := layerNameOf(region, layer)
	if err != nil {
		return "", "", err
	}
	lv := p.liveLayerVersion(name, version)
	if lv == nil {
		return "", "", errLayerVersionMissing(name, version)
	}
	if lv.Policy == nil {
		return "", "", &notFoundError{"No policy is associated with the given resource."}
	}
	b, err := json.Marshal(lv.Policy.Policy)
	return string(b), lv.Policy.RevisionId, err
}

// RemoveLayerVersionPermission removes a statement; the policy goes with its last one.
func (p *Platform) RemoveLayerVersionPermission(region, layer string, version int64, sid, revision string) error {
	return p.changeLayerPolicy(region, layer, version, func(_ string, lv *layerVersion) error {
		if lv.Policy == nil {
			return &notFoundError{"Statement " + sid + " is not found in resource policy."}
		}
		if revision != "" && revision != lv.Policy.RevisionId {
			return errPreconditionFailed("GetLayerPolicy")
		}
		i := slices.IndexFunc(lv.Policy.Policy.Statement, func(s PolicyStatement) bool { return s.Sid == sid })
		if i < 0 {
			return &notFoundError{"Statement " + sid + " is not found in resource policy."}
		}
		rest := slices.Delete(slices.Clone(lv.Policy.Policy.Statement), i, i+1)
		lv.Policy = nil
		if len(rest) > 0 {
			lv.Policy = &layerPolicy{Policy: resourcePolicy{Version: "2012-10-17", ID: "default", Statement: rest}, RevisionId: newRevision()}
		}
		return nil
	})
}
