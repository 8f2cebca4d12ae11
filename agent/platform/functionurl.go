package platform

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strings"
	"time"
)

// Function URL configs (CreateFunctionUrlConfig, GetFunctionUrlConfig,
// UpdateFunctionUrlConfig, DeleteFunctionUrlConfig, ListFunctionUrlConfigs), kept per $LATEST
// and alias (a URL cannot name a version: the API refuses a numeric qualifier) with their
// answers as AWS's recording has them. The URL is served by the platform's API listener
// (lambdaapi/urlinvoke.go): http://<url-id>.lambda-url.<region>.localhost:<port>/ (a *.localhost
// name is the loopback address, RFC 6761), as AWS serves https://<url-id>.lambda-url.<region>.on.aws/.

// FunctionURLConfig is Lambda's FunctionUrlConfig. InvokeMode is kept as the caller gave it
// ("" = BUFFERED, which GetFunctionUrlConfig shows; Create's and Update's answers omit it then,
// as recorded).
type FunctionURLConfig struct {
	FunctionUrl      string         `json:"FunctionUrl"`
	FunctionArn      string         `json:"FunctionArn"`
	AuthType         string         `json:"AuthType"`
	Cors             map[string]any `json:"Cors,omitempty"`
	CreationTime     string         `json:"CreationTime"`
	LastModifiedTime string         `json:"LastModifiedTime"`
	InvokeMode       string         `json:"InvokeMode,omitempty"`
}

// FunctionURLInput is Create's and Update's request; nil fields of an update stay.
type FunctionURLInput struct {
	AuthType   *string
	Cors       map[string]any
	InvokeMode *string
	Port       string // the API listener's ":port", which the URL is served on ("" = none)
}

// urlTime is the format of a URL config's times: AWS's documented example,
// "2021-10-31T22:40:34.654303Z" (CreateFunctionUrlConfig, Response Syntax).
func urlTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

func errFunctionDoesNotExist() error { return &notFoundError{"Function does not exist"} }

// urlID is the URL's host label: 32 random lowercase hex digits, as long as AWS's url-id.
func urlID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// CreateFunctionURLConfig gives $LATEST (no qualifier) or an alias a URL config.
func (p *Platform) CreateFunctionURLConfig(ref funcRef, in FunctionURLInput) (FunctionURLConfig, error) {
	var out FunctionURLConfig
	if _, err := p.function(ref.fnKey); err != nil {
		return out, errFunctionDoesNotExist()
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if s := next.qualified(ref.Qualifier); s != nil && s.URL != nil {
			return errConflict("Failed to create function url config for [functionArn = %s]. Error message:  FunctionUrlConfig exists for this Lambda function", s.URL.FunctionArn)
		}
		if q := ref.Qualifier; q != "" && next.Aliases[q] == nil {
			return errFunctionDoesNotExist()
		}
		now := urlTime(time.Now())
		out = FunctionURLConfig{
			FunctionUrl: "http://" + urlID() + ".lambda-url." + ref.Region + ".localhost" + in.Port + "/",
			FunctionArn: ref.fnKey.qualifiedARN(ref.Qualifier), AuthType: *in.AuthType, Cors: in.Cors,
			CreationTime: now, LastModifiedTime: now,
		}
		if in.InvokeMode != nil {
			out.InvokeMode = *in.InvokeMode
		}
		c := out
		next.editQualified(ref.Qualifier, func(s *qualifiedState) { s.URL = &c })
		return nil
	})
	return out, err
}

// GetFunctionURLConfig is the URL config of $LATEST or an alias.
func (p *Platform) GetFunctionURLConfig(ref funcRef) (FunctionURLConfig, error) {
	f, err := p.function(ref.fnKey)
	if err != nil {
		return FunctionURLConfig{}, resourceNotFound()
	}
	s := f.qualified(ref.Qualifier)
	if s == nil || s.URL == nil {
		return FunctionURLConfig{}, resourceNotFound()
	}
	return *s.URL, nil
}

// UpdateFunctionURLConfig changes the fields in; LastModifiedTime moves.
func (p *Platform) UpdateFunctionURLConfig(ref funcRef, in FunctionURLInput) (FunctionURLConfig, error) {
	var out FunctionURLConfig
	if _, err := p.function(ref.fnKey); err != nil {
		return out, errFunctionDoesNotExist()
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if q := ref.Qualifier; q != "" && next.Aliases[q] == nil {
			return errFunctionDoesNotExist()
		}
		s := next.qualified(ref.Qualifier)
		if s == nil || s.URL == nil {
			return resourceNotFound()
		}
		out = *s.URL
		if in.AuthType != nil {
			out.AuthType = *in.AuthType
		}
		if in.Cors != nil {
			out.Cors = in.Cors
		}
		if in.InvokeMode != nil {
			out.InvokeMode = *in.InvokeMode
		}
		out.LastModifiedTime = urlTime(time.Now())
		c := out
		next.editQualified(ref.Qualifier, func(s *qualifiedState) { s.URL = &c })
		return nil
	})
	return out, err
}

// DeleteFunctionURLConfig removes the URL config of $LATEST or an alias.
func (p *Platform) DeleteFunctionURLConfig(ref funcRef) error {
	if _, err := p.function(ref.fnKey); err != nil {
		return resourceNotFound()
	}
	_, err := p.replace(ref.fnKey, func(next *Function) error {
		if s := next.qualified(ref.Qualifier); s == nil || s.URL == nil {
			return resourceNotFound()
		}
		next.editQualified(ref.Qualifier, func(s *qualifiedState) { s.URL = nil })
		return nil
	})
	return err
}

// ListFunctionURLConfigs lists the function's URL configs by FunctionArn, a page at a time
// (marker: the last FunctionArn of the previous page).
func (p *Platform) ListFunctionURLConfigs(key fnKey, marker string, max int) ([]FunctionURLConfig, string, error) {
	f, err := p.function(key)
	if err != nil {
		return nil, "", errFunctionDoesNotExist()
	}
	var all []FunctionURLConfig
	for _, s := range f.Qualified {
		if s.URL != nil {
			all = append(all, *s.URL)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].FunctionArn < all[j].FunctionArn })
	return pageAfter(all, marker, max, func(c FunctionURLConfig) string { return c.FunctionArn })
}

// pageAfter is the page of list after marker (items sorted by id; "" = from the start) and
// the marker of the next page ("" after the last).
func pageAfter[T any](list []T, marker string, max int, id func(T) string) ([]T, string, error) {
	start := 0
	if marker != "" {
		start = sort.Search(len(list), func(i int) bool { return id(list[i]) > marker })
	}
	out := []T{}
	for i := start; i < len(list); i++ {
		if len(out) == max {
			return out, id(out[len(out)-1]), nil
		}
		out = append(out, list[i])
	}
	return out, "", nil
}

// FunctionURLTarget finds the function, version or alias whose URL has the id (the URL's first
// host label) in region, with its config.
func (p *Platform) FunctionURLTarget(region, id string) (FunctionRef, FunctionURLConfig, error) {
	prefix := "http://" + id + ".lambda-url." + region + "."
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, f := range p.functions {
		if k.Region != region {
			continue
		}
		for q, s := range f.Qualified {
			if s.URL != nil && strings.HasPrefix(s.URL.FunctionUrl, prefix) {
				if q == latestQualifier {
					q = ""
				}
				return funcRef{k, q}, *s.URL, nil
			}
		}
	}
	return funcRef{}, FunctionURLConfig{}, resourceNotFound()
}
