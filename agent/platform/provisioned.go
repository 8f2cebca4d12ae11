package platform

import (
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Provisioned concurrency configs (PutProvisionedConcurrencyConfig,
// GetProvisionedConcurrencyConfig, DeleteProvisionedConcurrencyConfig,
// ListProvisionedConcurrencyConfigs), kept per published version and alias with AWS's recorded
// checks and answers: Put answers IN_PROGRESS with nothing allocated yet; the config is READY
// from then on. The platform does not pre-warm instances for it: an invocation of a version
// with provisioned concurrency starts cold like any other (docs/platform.md, Compatibility).
// What is requested is checked as Lambda checks it: within the function's reserved concurrency,
// and leaving the account its minimum of unreserved concurrency (concurrency.go).

// ProvisionedConcurrencyConfig is what the platform keeps: the request and when it was made.
type ProvisionedConcurrencyConfig struct {
	Requested    int    `json:"requested"`
	LastModified string `json:"last_modified"`
}

// ProvisionedConcurrencyStatus is Get's answer (and an item of List's, with FunctionArn).
type ProvisionedConcurrencyStatus struct {
	FunctionArn                              string `json:"FunctionArn,omitempty"`
	RequestedProvisionedConcurrentExecutions int    `json:"RequestedProvisionedConcurrentExecutions"`
	AvailableProvisionedConcurrentExecutions int    `json:"AvailableProvisionedConcurrentExecutions"`
	AllocatedProvisionedConcurrentExecutions int    `json:"AllocatedProvisionedConcurrentExecutions"`
	Status                                   string `json:"Status"`
	LastModified                             string `json:"LastModified"`
}

func errNoProvisionedConfig() error {
	return &apiError{http.StatusNotFound, "ProvisionedConcurrencyConfigNotFoundException", "No Provisioned Concurrency Config found for this function", ""}
}

// provisionedTarget checks that q names a published version or an alias of the function, in
// Lambda's order: a missing alias is named as such even when the function is missing too.
func (p *Platform) provisionedTarget(key fnKey, q, latestMsg string) (*Function, error) {
	if q == "" || q == latestQualifier {
		return nil, errInvalid("%s", latestMsg)
	}
	f, _ := p.function(key)
	if versionRE.MatchString(q) {
		if f == nil || f.version(q) == nil {
			return nil, errNotFound(key, q)
		}
	} else if f == nil || f.Aliases[q] == nil {
		return nil, errAliasNotFound(key, q)
	}
	return f, nil
}

const msgProvisionedNotLatest = "The function resource provided must be an alias or a published version."

// PutProvisionedConcurrencyConfig requests n provisioned instances of a version or alias.
func (p *Platform) PutProvisionedConcurrencyConfig(ref funcRef, n int) (ProvisionedConcurrencyStatus, error) {
	var out ProvisionedConcurrencyStatus
	if n < 1 {
		return out, errValidation(strconv.Itoa(n), "provisionedConcurrentExecutions", "Member must have value greater than or equal to 1")
	}
	q := ref.Qualifier
	if _, err := p.provisionedTarget(ref.fnKey, q, "Provisioned Concurrency Configs cannot be applied to unpublished function versions."); err != nil {
		return out, err
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if _, err := p.provisionedTarget(ref.fnKey, q, msgProvisionedNotLatest); err != nil {
			return err
		}
		// A version is provisioned once: through itself or through one alias of it.
		if a := next.Aliases[q]; a != nil {
			if s := next.qualified(a.FunctionVersion); s != nil && s.Provisioned != nil {
				return errConflict("Alias can't be used for Provisioned Concurrency configuration on an already Provisioned version")
			}
		} else {
			for _, a := range next.Aliases {
				if s := next.qualified(a.Name); a.FunctionVersion == q && s != nil && s.Provisioned != nil {
					return errConflict("Version is pointed by a Provisioned Concurrency alias")
				}
			}
		}
		others := 0
		for k, s := range next.Qualified {
			if k != q && s.Provisioned != nil {
				others += s.Provisioned.Requested
			}
		}
		if r := next.ReservedConcurrency; r != nil && *r < others+n {
			return errInvalid("Requested Provisioned Concurrency should not be greater than the reservedConcurrentExecution for function")
		}
		if unreserved := p.UnreservedConcurrency(); next.ReservedConcurrency == nil && n > unreserved {
			// more than the account could ever give: AWS names its unreserved concurrency
			return errQuota("Specified ConcurrentExecutions for function is greater than account's unreserved concurrency [%d].", unreserved)
		}
		if next.ReservedConcurrency == nil && p.UnreservedConcurrency()-others-n < p.minUnreserved() {
			return errQuota("Specified ConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [%d].", p.minUnreserved())
		}
		c := ProvisionedConcurrencyConfig{Requested: n, LastModified: lambdaTime(time.Now())}
		next.editQualified(q, func(s *qualifiedState) { s.Provisioned = &c })
		out = ProvisionedConcurrencyStatus{RequestedProvisionedConcurrentExecutions: n, Status: "IN_PROGRESS", LastModified: c.LastModified}
		return nil
	})
	return out, err
}

// status is a kept config as Get shows it: READY, all of it allocated and available (the
// platform starts instances on demand instead, see above).
func (c *ProvisionedConcurrencyConfig) status() ProvisionedConcurrencyStatus {
	return ProvisionedConcurrencyStatus{RequestedProvisionedConcurrentExecutions: c.Requested,
		AvailableProvisionedConcurrentExecutions: c.Requested, AllocatedProvisionedConcurrentExecutions: c.Requested,
		Status: "READY", LastModified: c.LastModified}
}

// GetProvisionedConcurrencyConfig is the config of a version or alias.
func (p *Platform) GetProvisionedConcurrencyConfig(ref funcRef) (ProvisionedConcurrencyStatus, error) {
	f, err := p.provisionedTarget(ref.fnKey, ref.Qualifier, msgProvisionedNotLatest)
	if err != nil {
		return ProvisionedConcurrencyStatus{}, err
	}
	s := f.qualified(ref.Qualifier)
	if s == nil || s.Provisioned == nil {
		return ProvisionedConcurrencyStatus{}, errNoProvisionedConfig()
	}
	return s.Provisioned.status(), nil
}

// DeleteProvisionedConcurrencyConfig removes the config; none to remove is no error (recorded).
func (p *Platform) DeleteProvisionedConcurrencyConfig(ref funcRef) error {
	if _, err := p.provisionedTarget(ref.fnKey, ref.Qualifier, msgProvisionedNotLatest); err != nil {
		return err
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if s := next.qualified(ref.Qualifier); s != nil && s.Provisioned != nil {
			next.editQualified(ref.Qualifier, func(s *qualifiedState) { s.Provisioned = nil })
		}
		return nil
	})
	return err
}

// ListProvisionedConcurrencyConfigs lists the function's configs by FunctionArn.
func (p *Platform) ListProvisionedConcurrencyConfigs(key fnKey, marker string, max int) ([]ProvisionedConcurrencyStatus, string, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, "", err
	}
	var all []ProvisionedConcurrencyStatus
	for q, s := range f.Qualified {
		if s.Provisioned != nil {
			st := s.Provisioned.status()
			st.FunctionArn = key.qualifiedARN(q)
			all = append(all, st)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].FunctionArn < all[j].FunctionArn })
	return pageAfter(all, marker, max, func(c ProvisionedConcurrencyStatus) string { return c.FunctionArn })
}
