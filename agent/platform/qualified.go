package platform

import (
	"maps"
	"net/http"
)

// What Lambda keeps per $LATEST, published version and alias of a function, beside their
// configuration: the resource-based policy (policy.go), the function URL config
// (functionurl.go), the event invoke config (eventinvoke.go) and the provisioned concurrency
// config (provisioned.go). It is kept with the function (function.json), so it survives a
// restart as the function's other settings do, and goes with the version or alias it belongs
// to when that is deleted.

// latestQualifier is the key of the unqualified function's (= $LATEST's) settings.
const latestQualifier = "$LATEST"

// qualifiedState is one qualifier's settings; a nil field is a setting never made.
type qualifiedState struct {
	Policy      *resourcePolicy               `json:"policy,omitempty"`
	URL         *FunctionURLConfig            `json:"url,omitempty"`
	EventInvoke *EventInvokeConfig            `json:"event_invoke,omitempty"`
	Provisioned *ProvisionedConcurrencyConfig `json:"provisioned,omitempty"`
}

func (s *qualifiedState) empty() bool {
	return s.Policy == nil && s.URL == nil && s.EventInvoke == nil && s.Provisioned == nil
}

// qualified is q's settings in f (nil when none were made); read only.
func (f *Function) qualified(q string) *qualifiedState {
	if q == "" {
		q = latestQualifier
	}
	return f.Qualified[q]
}

// editQualified changes a copy of q's settings in next (a function being replaced, whose maps
// are shared with the published one until copied): the published state is never modified.
func (next *Function) editQualified(q string, change func(*qualifiedState)) {
	if q == "" {
		q = latestQualifier
	}
	m := maps.Clone(next.Qualified)
	if m == nil {
		m = map[string]*qualifiedState{}
	}
	var s qualifiedState
	if old := m[q]; old != nil {
		s = *old
	}
	change(&s)
	if s.empty() {
		delete(m, q)
	} else {
		m[q] = &s
	}
	if len(m) == 0 {
		m = nil
	}
	next.Qualified = m
}

// dropQualified forgets the settings of a deleted version or alias, so that a new alias of the
// same name starts without them (as on Lambda).
func (next *Function) dropQualified(q string) {
	if _, ok := next.Qualified[q]; !ok {
		return
	}
	next.Qualified = maps.Clone(next.Qualified)
	delete(next.Qualified, q)
}

// checkQualifierExists answers as Lambda does for a qualifier that names nothing: a missing
// alias is "Cannot find alias arn", a missing version (or a name that can be neither) "Function
// not found". An empty qualifier is the function itself.
func checkQualifierExists(f *Function, q string) error {
	key := f.key()
	switch {
	case q == "" || q == latestQualifier:
		return nil
	case versionRE.MatchString(q):
		if f.version(q) == nil {
			return errNotFound(key, q)
		}
	case aliasNameRE.MatchString(q):
		if _, ok := f.Aliases[q]; !ok {
			return errAliasNotFound(key, q)
		}
	default:
		return errNotFound(key, q)
	}
	return nil
}

// resourceNotFound is Lambda's generic answer for a resource (a policy, a config) that does
// not exist.
func resourceNotFound() error {
	return &apiError{http.StatusNotFound, "ResourceNotFoundException", "The resource you requested does not exist.", ""}
}
