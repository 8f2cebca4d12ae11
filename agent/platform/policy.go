package platform

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Resource-based policies (AddPermission, GetPolicy, RemovePermission), kept per $LATEST,
// version and alias (qualified.go) as Lambda keeps them: a policy of the unqualified function
// is not a version's, and publishing a version does not copy it. Their statements and answers
// are AWS's recorded ones (LocalStack's test_lambda_api snapshots, replayed by
// tests/conformance/replay). The platform keeps and shows policies but does not enforce them:
// it has no IAM, and every caller that holds the API token may invoke every function.
//
// A policy's RevisionId is its resource's: the function's (for $LATEST), the version's or the
// alias's, and every change of the policy gives that resource a new one (the recording shows a
// new RevisionId after each RemovePermission; AWS's AddPermission documentation: "Update the
// policy only if the revision ID matches the ID that's specified").

// resourcePolicy is the policy document as GetPolicy shows it (field order as AWS's).
type resourcePolicy struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id"`
	Statement []PolicyStatement `json:"Statement"`
}

// PolicyStatement is one statement, in AWS's field order.
type PolicyStatement struct {
	Sid       string                       `json:"Sid"`
	Effect    string                       `json:"Effect"`
	Principal any                          `json:"Principal"`
	Action    string                       `json:"Action"`
	Resource  string                       `json:"Resource"`
	Condition map[string]map[string]string `json:"Condition,omitempty"`
}

// PermissionInput is AddPermission's request.
type PermissionInput struct {
	StatementId, Action, Principal                    string
	SourceArn, SourceAccount, PrincipalOrgID          string
	EventSourceToken, FunctionUrlAuthType, RevisionId string
}

var iamARNRE = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:iam:`)

// statementPrincipal is how AWS writes a principal in a statement: a service principal as
// Service, an account as its root user's ARN, an IAM ARN as it is, "*" as it is; anything else
// is refused with AWS's recorded message.
func statementPrincipal(principal string) (any, error) {
	switch {
	case strings.HasSuffix(principal, ".amazonaws.com"):
		return map[string]string{"Service": principal}, nil
	case accountRE.MatchString(principal):
		return map[string]string{"AWS": "arn:aws:iam::" + principal + ":root"}, nil
	case iamARNRE.MatchString(principal):
		return map[string]string{"AWS": principal}, nil
	case principal == "*":
		return principal, nil
	}
	return nil, errInvalid("The provided principal was invalid. Please check the principal and try again.")
}

func (in PermissionInput) statement(resource string) (PolicyStatement, error) {
	principal, err := statementPrincipal(in.Principal)
	if err != nil {
		return PolicyStatement{}, err
	}
	st := PolicyStatement{Sid: in.StatementId, Effect: "Allow", Principal: principal, Action: in.Action, Resource: resource}
	cond := map[string]map[string]string{}
	add := func(op, k, v string) {
		if v == "" {
			return
		}
		if cond[op] == nil {
			cond[op] = map[string]string{}
		}
		cond[op][k] = v
	}
	add("StringEquals", "lambda:FunctionUrlAuthType", in.FunctionUrlAuthType)
	add("StringEquals", "aws:PrincipalOrgID", in.PrincipalOrgID)
	add("StringEquals", "AWS:SourceAccount", in.SourceAccount)
	add("StringEquals", "lambda:EventSourceToken", in.EventSourceToken)
	add("ArnLike", "AWS:SourceArn", in.SourceArn)
	if len(cond) > 0 {
		st.Condition = cond
	}
	return st, nil
}

// revisionOf is the RevisionId of the resource q names in f ("" or $LATEST: the function).
func revisionOf(f *Function, q string) string {
	switch {
	case q == "" || q == latestQualifier:
		return f.Config.RevisionId
	case versionRE.MatchString(q):
		if v := f.version(q); v != nil {
			return v.Config.RevisionId
		}
	default:
		if a := f.Aliases[q]; a != nil {
			return a.RevisionId
		}
	}
	return ""
}

// bumpRevision gives the resource q names in next a new RevisionId, copying what it changes.
func bumpRevision(next *Function, q string) {
	switch {
	case q == "" || q == latestQualifier:
		next.Config.RevisionId = newRevision()
	case versionRE.MatchString(q):
		for i, v := range next.Versions {
			if v.Config.Version == q {
				c := *v
				c.Config.RevisionId = newRevision()
				next.Versions[i] = &c
			}
		}
	default:
		if a := next.Aliases[q]; a != nil {
			c := *a
			c.RevisionId = newRevision()
			next.Aliases[q] = &c
		}
	}
}

// AddPermission adds a statement to the policy of the function, version or alias ref names
// and returns the statement as JSON (AWS answers it as a string).
func (p *Platform) AddPermission(ref funcRef, in PermissionInput) (string, error) {
	q := ref.Qualifier
	if q == latestQualifier {
		return "", errInvalid("We currently do not support adding policies for $LATEST.")
	}
	var added PolicyStatement
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if err := checkQualifierExists(next, q); err != nil {
			return err
		}
		if in.RevisionId != "" && in.RevisionId != revisionOf(next, q) {
			return errPreconditionFailed("GetPolicy")
		}
		var old []PolicyStatement
		if s := next.qualified(q); s != nil && s.Policy != nil {
			old = s.Policy.Statement
		}
		if slices.ContainsFunc(old, func(s PolicyStatement) bool { return s.Sid == in.StatementId }) {
			// A statement id is unique per $LATEST, version or alias, not across them.
			return errConflict("The statement id (%s) provided already exists. Please provide a new statement id, or remove the existing statement.", in.StatementId)
		}
		st, err := in.statement(ref.fnKey.qualifiedARN(q))
		if err != nil {
			return err
		}
		added = st
		next.editQualified(q, func(s *qualifiedState) {
			s.Policy = &resourcePolicy{Version: "2012-10-17", ID: "default", Statement: append(slices.Clone(old), st)}
		})
		bumpRevision(next, q)
		return nil
	})
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(added)
	return string(b), err
}

// GetPolicy is the policy document (as JSON) of the function, version or alias and its
// RevisionId.
func (p *Platform) GetPolicy(ref funcRef) (policy, revision string, err error) {
	f, err := p.function(ref.fnKey)
	if err != nil {
		return "", "", resourceNotFound()
	}
	s := f.qualified(ref.Qualifier)
	if s == nil || s.Policy == nil {
		return "", "", resourceNotFound()
	}
	b, err := json.Marshal(s.Policy)
	return string(b), revisionOf(f, ref.Qualifier), err
}

// RemovePermission removes one statement; the policy goes with its last statement.
func (p *Platform) RemovePermission(ref funcRef, sid, revision string) error {
	q := ref.Qualifier
	if _, err := p.function(ref.fnKey); err != nil {
		return &notFoundError{"No policy found for: " + ref.fnKey.arn()}
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if err := checkQualifierExists(next, q); err != nil {
			return err
		}
		s := next.qualified(q)
		if s == nil || s.Policy == nil {
			return &notFoundError{"No policy is associated with the given resource."}
		}
		i := slices.IndexFunc(s.Policy.Statement, func(s PolicyStatement) bool { return s.Sid == sid })
		if i < 0 {
			return &notFoundError{"Statement " + sid + " is not found in resource policy."}
		}
		if revision != "" && revision != revisionOf(next, q) {
			return errPreconditionFailed("GetFunction/GetAlias")
		}
		rest := slices.Delete(slices.Clone(s.Policy.Statement), i, i+1)
		next.editQualified(q, func(s *qualifiedState) {
			s.Policy = nil
			if len(rest) > 0 {
				s.Policy = &resourcePolicy{Version: "2012-10-17", ID: "default", Statement: rest}
			}
		})
		bumpRevision(next, q)
		return nil
	})
	return err
}
