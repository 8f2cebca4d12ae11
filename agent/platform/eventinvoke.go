package platform

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Event invoke configs (PutFunctionEventInvokeConfig, UpdateFunctionEventInvokeConfig,
// GetFunctionEventInvokeConfig, DeleteFunctionEventInvokeConfig,
// ListFunctionEventInvokeConfigs), kept per $LATEST, version and alias with AWS's recorded
// answers. The platform's Event path acts on two of their settings (async.go):
// MaximumRetryAttempts (0-2: how many of Lambda's two retries a failed event gets) and
// MaximumEventAgeInSeconds (60-21600: how long an event may wait for capacity or for its next
// retry before it is dropped). Destinations (DestinationConfig) are validated and kept but not
// delivered to: the platform has no SQS, SNS or EventBridge, and does not invoke a destination
// function.

// EventInvokeConfig is Lambda's FunctionEventInvokeConfig; LastModified is epoch seconds (the
// API's timestamp type).
type EventInvokeConfig struct {
	FunctionArn              string            `json:"FunctionArn"`
	LastModified             float64           `json:"LastModified"`
	MaximumRetryAttempts     *int              `json:"MaximumRetryAttempts,omitempty"`
	MaximumEventAgeInSeconds *int              `json:"MaximumEventAgeInSeconds,omitempty"`
	DestinationConfig        DestinationConfig `json:"DestinationConfig"`
}

// DestinationConfig is where Lambda would send an event's record; an empty Destination is none.
type DestinationConfig struct {
	OnSuccess Destination `json:"OnSuccess"`
	OnFailure Destination `json:"OnFailure"`
}

type Destination struct {
	Destination string `json:"Destination,omitempty"`
}

// EventInvokeInput is Put's and Update's request; nil fields are not given.
type EventInvokeInput struct {
	MaximumRetryAttempts     *int
	MaximumEventAgeInSeconds *int
	DestinationConfig        *DestinationConfig
}

// Lambda's limits (API reference, PutFunctionEventInvokeConfig).
const (
	maxAsyncRetryAttempts            = 2
	minAsyncEventAgeS, maxAsyncAgeS  = 60, 21600
	destinationPatternQuoted         = `$|kafka://([^.]([a-zA-Z0-9\-_.]{0,248}))|arn:(aws[a-zA-Z0-9-]*):([a-zA-Z0-9\-])+:((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1})?:(\d{12})?:(.*)`
	errMsgEventInvokeNothingToChange = "You must specify at least one of error handling or destination setting."
)

var (
	destinationRE = regexp.MustCompile(`^(|kafka://([^.]([a-zA-Z0-9\-_.]{0,248}))|arn:(aws[a-zA-Z0-9-]*):([a-zA-Z0-9\-])+:((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1})?:(\d{12})?:(.*))$`)
	fnARNRE       = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:lambda:[a-z0-9-]+:\d{12}:function:([a-zA-Z0-9_-]+)(:.*)?$`)
)

func (in EventInvokeInput) check() error {
	if in.MaximumRetryAttempts == nil && in.MaximumEventAgeInSeconds == nil && in.DestinationConfig == nil {
		return errInvalid(errMsgEventInvokeNothingToChange)
	}
	// AWS's model constraints, in its ValidationException wording.
	if n := in.MaximumRetryAttempts; n != nil && *n < 0 {
		return errValidation(strconv.Itoa(*n), "maximumRetryAttempts", "Member must have value greater than or equal to 0")
	}
	if n := in.MaximumRetryAttempts; n != nil && *n > maxAsyncRetryAttempts {
		return errValidation(strconv.Itoa(*n), "maximumRetryAttempts", "Member must have value less than or equal to 2")
	}
	if n := in.MaximumEventAgeInSeconds; n != nil && *n < minAsyncEventAgeS {
		return errValidation(strconv.Itoa(*n), "maximumEventAgeInSeconds", "Member must have value greater than or equal to 60")
	}
	if n := in.MaximumEventAgeInSeconds; n != nil && *n > maxAsyncAgeS {
		return errValidation(strconv.Itoa(*n), "maximumEventAgeInSeconds", "Member must have value less than or equal to 21600")
	}
	return nil
}

// checkDestinations applies Lambda's checks (as recorded): the ARN pattern, a Lambda
// destination that exists and is not the function itself, and only the services Lambda sends
// to (SQS, SNS, EventBridge, Lambda).
func (p *Platform) checkDestinations(key fnKey, d *DestinationConfig) error {
	if d == nil {
		return nil
	}
	bad := false
	for _, arn := range []string{d.OnFailure.Destination, d.OnSuccess.Destination} {
		if arn == "" {
			continue
		}
		if !destinationRE.MatchString(arn) {
			return errValidation(arn, "destinationConfig.onFailure.destination", "Member must satisfy regular expression pattern: "+destinationPatternQuoted)
		}
		parts := strings.Split(arn, ":")
		switch {
		case len(parts) < 3:
			bad = true
		case parts[2] == "lambda":
			m := fnARNRE.FindStringSubmatch(arn)
			if m == nil || !p.exists(fnKey{parts[3], m[1]}) {
				return errInvalid("The destination ARN %s is invalid.", arn)
			}
			if m[1] == key.Name {
				return errInvalid("You can't specify the function as a destination for itself.")
			}
		case parts[2] == "sqs" || parts[2] == "sns" || parts[2] == "events":
		default:
			bad = true
		}
	}
	if bad {
		part := func(name, arn string) string {
			if arn == "" {
				return "null"
			}
			return name + "(destination=" + arn + ")"
		}
		return errInvalid("The provided destination config DestinationConfig(onSuccess=%s, onFailure=%s) is invalid.",
			part("OnSuccess", d.OnSuccess.Destination), part("OnFailure", d.OnFailure.Destination))
	}
	return nil
}

func errNoEventInvokeConfig(key fnKey, q string) error {
	if q == "" {
		q = latestQualifier
	}
	return &notFoundError{"The function " + key.qualifiedARN(q) + " doesn't have an EventInvokeConfig"}
}

func errFunctionDoesntExist() error { return &notFoundError{"The function doesn't exist."} }

// qualifierExists says whether q ("" = $LATEST) names $LATEST, a version or an alias of f.
func qualifierExists(f *Function, q string) bool {
	return q == "" || q == latestQualifier || f.version(q) != nil || f.Aliases[q] != nil
}

// PutFunctionEventInvokeConfig replaces the config of $LATEST, a version or an alias.
func (p *Platform) PutFunctionEventInvokeConfig(ref funcRef, in EventInvokeInput) (EventInvokeConfig, error) {
	return p.setEventInvokeConfig(ref, in, true)
}

// UpdateFunctionEventInvokeConfig changes the given fields of an existing config.
func (p *Platform) UpdateFunctionEventInvokeConfig(ref funcRef, in EventInvokeInput) (EventInvokeConfig, error) {
	return p.setEventInvokeConfig(ref, in, false)
}

func (p *Platform) setEventInvokeConfig(ref funcRef, in EventInvokeInput, put bool) (EventInvokeConfig, error) {
	var out EventInvokeConfig
	if err := in.check(); err != nil {
		return out, err
	}
	if f, err := p.function(ref.fnKey); err != nil || !qualifierExists(f, ref.Qualifier) {
		return out, errFunctionDoesntExist()
	}
	q := ref.Qualifier
	if q == "" {
		q = latestQualifier
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if !qualifierExists(next, q) {
			return errFunctionDoesntExist()
		}
		old := next.qualified(q)
		if put {
			out = EventInvokeConfig{}
		} else {
			if old == nil || old.EventInvoke == nil {
				return errNoEventInvokeConfig(ref.fnKey, q)
			}
			out = *old.EventInvoke
		}
		if err := p.checkDestinations(ref.fnKey, in.DestinationConfig); err != nil {
			return err
		}
		if in.MaximumRetryAttempts != nil || put {
			out.MaximumRetryAttempts = in.MaximumRetryAttempts
		}
		if in.MaximumEventAgeInSeconds != nil || put {
			out.MaximumEventAgeInSeconds = in.MaximumEventAgeInSeconds
		}
		if in.DestinationConfig != nil {
			out.DestinationConfig = *in.DestinationConfig
		} else if put {
			out.DestinationConfig = DestinationConfig{}
		}
		out.FunctionArn = ref.fnKey.qualifiedARN(q)
		out.LastModified = float64(time.Now().UnixMilli()) / 1000
		c := out
		next.editQualified(q, func(s *qualifiedState) { s.EventInvoke = &c })
		return nil
	})
	return out, err
}

// GetFunctionEventInvokeConfig is the config of $LATEST, a version or an alias.
func (p *Platform) GetFunctionEventInvokeConfig(ref funcRef) (EventInvokeConfig, error) {
	f, err := p.function(ref.fnKey)
	if err != nil {
		return EventInvokeConfig{}, errNoEventInvokeConfig(ref.fnKey, ref.Qualifier)
	}
	s := f.qualified(ref.Qualifier)
	if s == nil || s.EventInvoke == nil {
		return EventInvokeConfig{}, errNoEventInvokeConfig(ref.fnKey, ref.Qualifier)
	}
	return *s.EventInvoke, nil
}

// DeleteFunctionEventInvokeConfig removes the config of $LATEST, a version or an alias.
func (p *Platform) DeleteFunctionEventInvokeConfig(ref funcRef) error {
	if _, err := p.function(ref.fnKey); err != nil {
		return errNoEventInvokeConfig(ref.fnKey, ref.Qualifier)
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if s := next.qualified(ref.Qualifier); s == nil || s.EventInvoke == nil {
			return errNoEventInvokeConfig(ref.fnKey, ref.Qualifier)
		}
		next.editQualified(ref.Qualifier, func(s *qualifiedState) { s.EventInvoke = nil })
		return nil
	})
	return err
}

// ListFunctionEventInvokeConfigs lists the function's configs by FunctionArn, a page at a time.
func (p *Platform) ListFunctionEventInvokeConfigs(key fnKey, marker string, max int) ([]EventInvokeConfig, string, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, "", errFunctionDoesntExist()
	}
	var all []EventInvokeConfig
	for _, s := range f.Qualified {
		if s.EventInvoke != nil {
			all = append(all, *s.EventInvoke)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].FunctionArn < all[j].FunctionArn })
	return pageAfter(all, marker, max, func(c EventInvokeConfig) string { return c.FunctionArn })
}

// asyncLimits is what the Event path honours of the event invoke config of the version or
// alias an event names (unqualified: $LATEST's): the retries a failed event gets (of Lambda's
// retries retries) and how old it may grow (defaultAge unless configured).
func (p *Platform) asyncLimits(req InvokeRequest, retries int, defaultAge time.Duration) (int, time.Duration) {
	maxAge := defaultAge
	region := req.Region
	if region == "" {
		region = defaultRegion
	}
	f, err := p.function(fnKey{region, req.Name})
	if err != nil {
		return retries, maxAge
	}
	s := f.qualified(req.Qualifier)
	if s == nil || s.EventInvoke == nil {
		return retries, maxAge
	}
	if n := s.EventInvoke.MaximumRetryAttempts; n != nil && *n < retries {
		retries = *n
	}
	if n := s.EventInvoke.MaximumEventAgeInSeconds; n != nil {
		maxAge = time.Duration(*n) * time.Second
	}
	return retries, maxAge
}
