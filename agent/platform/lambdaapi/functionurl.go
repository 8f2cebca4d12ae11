package lambdaapi

import (
	"net"
	"net/http"
	"regexp"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of function URL configs (functionurl.go of the core).

// A URL's qualifier is an alias: AWS's model pattern ((?!^\d+$)^[0-9a-zA-Z-_]+$) refuses a
// version number and $LATEST, with this message (recorded).
var (
	urlQualifierRE      = regexp.MustCompile(`^[0-9a-zA-Z-_]+$`)
	allDigitsRE         = regexp.MustCompile(`^\d+$`)
	urlQualifierPattern = `((?!^\d+$)^[0-9a-zA-Z-_]+$)`
)

func checkURLQualifier(q string) error {
	if q != "" && (!urlQualifierRE.MatchString(q) || allDigitsRE.MatchString(q)) {
		return platform.ErrValidation(q, "qualifier", "Member must satisfy regular expression pattern: "+urlQualifierPattern)
	}
	return nil
}

func urlRef(r *http.Request) (platform.FunctionRef, error) {
	q := r.URL.Query().Get("Qualifier")
	if err := checkURLQualifier(q); err != nil {
		return platform.FunctionRef{}, err
	}
	ref, err := platform.ParseFunctionRef(r.PathValue("name"), q, platform.RequestRegion(r))
	if err == nil {
		err = checkURLQualifier(ref.Qualifier)
	}
	return ref, err
}

type urlRequest struct {
	AuthType   *string        `json:"AuthType"`
	Cors       map[string]any `json:"Cors"`
	InvokeMode *string        `json:"InvokeMode"`
}

func (u urlRequest) input(create bool) (platform.FunctionURLInput, error) {
	if create && u.AuthType == nil {
		return platform.FunctionURLInput{}, platform.ErrInvalid("AuthType is required")
	}
	if u.AuthType != nil && *u.AuthType != "NONE" && *u.AuthType != "AWS_IAM" {
		return platform.FunctionURLInput{}, platform.ErrValidation(*u.AuthType, "authType", "Member must satisfy enum value set: [AWS_IAM, NONE]")
	}
	if u.InvokeMode != nil && *u.InvokeMode != "BUFFERED" && *u.InvokeMode != "RESPONSE_STREAM" {
		return platform.FunctionURLInput{}, platform.ErrValidation(*u.InvokeMode, "invokeMode", "Member must satisfy enum value set: [RESPONSE_STREAM, BUFFERED]")
	}
	return platform.FunctionURLInput{AuthType: u.AuthType, Cors: u.Cors, InvokeMode: u.InvokeMode}, nil
}

// urlAnswer is Create's and Update's answer: without InvokeMode unless one was set, and
// without LastModifiedTime for Create (as recorded).
func urlAnswer(c platform.FunctionURLConfig, withModified bool) map[string]any {
	out := map[string]any{"FunctionUrl": c.FunctionUrl, "FunctionArn": c.FunctionArn, "AuthType": c.AuthType,
		"CreationTime": c.CreationTime}
	if c.Cors != nil {
		out["Cors"] = c.Cors
	}
	if c.InvokeMode != "" {
		out["InvokeMode"] = c.InvokeMode
	}
	if withModified {
		out["LastModifiedTime"] = c.LastModifiedTime
	}
	return out
}

// withDefaultMode is a config as Get and List show it: InvokeMode BUFFERED unless set.
func withDefaultMode(c platform.FunctionURLConfig) platform.FunctionURLConfig {
	if c.InvokeMode == "" {
		c.InvokeMode = "BUFFERED"
	}
	return c
}

func (a *api) createFunctionURLConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req urlRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	ref, err := urlRef(r)
	if err != nil {
		return response{}, err
	}
	in, err := req.input(true)
	if err != nil {
		return response{}, err
	}
	if _, port, err := net.SplitHostPort(r.Host); err == nil {
		in.Port = ":" + port // the URL is served where the API is (urlinvoke.go)
	}
	c, err := a.p.CreateFunctionURLConfig(ref, in)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, urlAnswer(c, false)), nil
}

func (a *api) getFunctionURLConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := urlRef(r)
	if err != nil {
		return response{}, err
	}
	c, err := a.p.GetFunctionURLConfig(ref)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, withDefaultMode(c)), nil
}

func (a *api) updateFunctionURLConfig(rc *http.ResponseController, r *http.Request) (response, error) {
	var req urlRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	ref, err := urlRef(r)
	if err != nil {
		return response{}, err
	}
	in, err := req.input(false)
	if err != nil {
		return response{}, err
	}
	c, err := a.p.UpdateFunctionURLConfig(ref, in)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, urlAnswer(c, true)), nil
}

func (a *api) deleteFunctionURLConfig(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := urlRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteFunctionURLConfig(ref); err != nil {
		return response{}, err
	}
	return noContent(), nil
}

func (a *api) listFunctionURLConfigs(_ *http.ResponseController, r *http.Request) (response, error) {
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	list, next, err := a.p.ListFunctionURLConfigs(key, r.URL.Query().Get("Marker"), maxItems(r, 50))
	if err != nil {
		return response{}, err
	}
	for i := range list {
		list[i] = withDefaultMode(list[i])
	}
	return page("FunctionUrlConfigs", list, next), nil
}
