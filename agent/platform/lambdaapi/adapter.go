// Package lambdaapi is the platform's Lambda REST API (and its few /faascope/ endpoints): HTTP
// in front of the core (package platform), which never imports it.
//
// Its handlers only translate: each parses and validates its request, calls the core and
// returns a response (status, headers, body) or an error. They never see the
// http.ResponseWriter: one adapter (serve) writes every answer, and every error as the AWS error
// botocore expects (platform.AWSError), as Firecracker's API server splits a parsed request from
// the response its one writer sends. A handler gets the response's *http.ResponseController only
// for the request body's deadlines (platform.NewTimedBody), which are set on the connection.
package lambdaapi

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/faascope/faascope/agent/platform"
)

// response is what a handler answers; the adapter writes it.
type response struct {
	status int
	header http.Header // set before the status line
	json   any         // the body as JSON (Content-Type application/json), when isJSON
	isJSON bool
	raw    []byte // otherwise the body as it is (Invoke's payload)
}

// jsonResponse is a JSON answer.
func jsonResponse(status int, v any) response { return response{status: status, json: v, isJSON: true} }

// noContent is an answer without a body (204).
func noContent() response { return response{status: http.StatusNoContent} }

// page answers a List operation: the page under key, and NextMarker unless it is the last.
func page(key string, list any, next string) response {
	out := map[string]any{key: list}
	if next != "" {
		out["NextMarker"] = next
	}
	return jsonResponse(http.StatusOK, out)
}

// handler translates a request into a core call and returns its answer or its error.
type handler func(rc *http.ResponseController, r *http.Request) (response, error)

// serve is the one adapter from handlers to HTTP: it writes a handler's response, or its error
// as an AWS error.
func serve(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		res, err := h(http.NewResponseController(w), r)
		if err != nil {
			writeAPIError(w, err)
			return
		}
		for k, v := range res.header {
			w.Header()[k] = v
		}
		if res.isJSON {
			writeJSON(w, res.status, res.json)
			return
		}
		w.WriteHeader(res.status)
		if res.raw != nil {
			w.Write(res.raw)
		}
	}
}

func writeAPIError(w http.ResponseWriter, err error) {
	ae := platform.AWSError(err)
	w.Header().Set("X-Amzn-ErrorType", ae.Code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status)
	body := map[string]string{"Type": "User", "Message": ae.Msg, "message": ae.Msg}
	if platform.Untyped(err) { // a few of AWS's answers have no Type (codesigning.go)
		delete(body, "Type")
	}
	if ae.Reason != "" {
		body["Reason"] = ae.Reason
	}
	json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// api is the platform's handlers.
type api struct{ p *platform.Platform }

// Handler is the Lambda REST API subset plus a few /faascope/ endpoints.
func Handler(p *platform.Platform) http.Handler {
	a := &api{p}
	mux := a.routes()
	token := p.Token()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A function URL's request (urlinvoke.go) is not an API call: its own AuthType says
		// whether it needs the token.
		if region, id, ok := functionURLHost(r.Host); ok {
			a.serveFunctionURL(w, r, region, id, token)
			return
		}
		if token != "" && !authorized(r, token) {
			writeAPIError(w, &platform.APIError{Status: http.StatusForbidden, Code: "UnrecognizedClientException",
				Msg: "The security token included in the request is invalid."})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authorized accepts the token as the access key id of an AWS SigV4 Authorization header (what
// boto3 and the AWS CLI send: set aws_access_key_id to the token) or as a bearer token. The
// signature itself is not checked: the token guards a loopback service against other local
// users and processes, it is not AWS IAM.
func authorized(r *http.Request, token string) bool {
	auth := r.Header.Get("Authorization")
	if b, ok := strings.CutPrefix(auth, "Bearer "); ok {
		return subtle.ConstantTimeCompare([]byte(b), []byte(token)) == 1
	}
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return false
	}
	key, _, _ := strings.Cut(cred, "/")
	return subtle.ConstantTimeCompare([]byte(key), []byte(token)) == 1
}

// routes maps the API onto handlers that only translate: each parses and validates its
// request, calls the platform's core and returns its answer or its error to the adapter
// (serve). None touches the platform's state or its lock (the compiler sees to it: they are in
// another package).
func (a *api) routes() *http.ServeMux {
	// Exact patterns only ({$} ends a path that ends in a slash): a request for an operation the
	// platform does not implement (AddPermission, GetPolicy, event source mappings, function
	// URLs, …) falls through to "/" and is refused as Lambda refuses an unknown operation,
	// whatever function it names, instead of being taken for another operation.
	mux := http.NewServeMux()
	handle := func(pattern string, h handler) { mux.HandleFunc(pattern, serve(h)) }
	handle("POST /2015-03-31/functions", a.createFunction)
	handle("POST /2015-03-31/functions/{$}", a.createFunction)
	handle("GET /2015-03-31/functions/{$}", a.listFunctions)
	handle("GET /2015-03-31/functions", a.listFunctions)
	handle("GET /2015-03-31/functions/{name}", a.getFunction)
	handle("GET /2015-03-31/functions/{name}/configuration", a.getConfiguration)
	handle("PUT /2015-03-31/functions/{name}/configuration", a.updateConfiguration)
	handle("PUT /2015-03-31/functions/{name}/code", a.updateCode)
	handle("DELETE /2015-03-31/functions/{name}", a.deleteFunction)
	handle("POST /2015-03-31/functions/{name}/invocations", a.invoke)
	handle("GET /2017-03-31/tags/{arn}", a.listTags)
	handle("POST /2017-03-31/tags/{arn}", a.tagResource)
	handle("DELETE /2017-03-31/tags/{arn}", a.untagResource)
	handle("PUT /2017-10-31/functions/{name}/concurrency", a.putFunctionConcurrency)
	handle("DELETE /2017-10-31/functions/{name}/concurrency", a.deleteFunctionConcurrency)
	handle("GET /2019-09-30/functions/{name}/concurrency", a.getFunctionConcurrency)
	handle("GET /2016-08-19/account-settings", a.getAccountSettings)
	handle("GET /2016-08-19/account-settings/", a.getAccountSettings)
	handle("POST /2018-10-31/layers/{layer}/versions", a.publishLayerVersion)
	handle("GET /2018-10-31/layers/{layer}/versions", a.listLayerVersions)
	handle("GET /2018-10-31/layers/{layer}/versions/{version}", a.getLayerVersion)
	handle("DELETE /2018-10-31/layers/{layer}/versions/{version}", a.deleteLayerVersion)
	handle("GET /2018-10-31/layers", a.listLayers)
	handle("POST /2015-03-31/functions/{name}/versions", a.publishVersion)
	handle("GET /2015-03-31/functions/{name}/versions", a.listVersions)
	handle("POST /2015-03-31/functions/{name}/aliases", a.createAlias)
	handle("GET /2015-03-31/functions/{name}/aliases", a.listAliases)
	handle("GET /2015-03-31/functions/{name}/aliases/{alias}", a.getAlias)
	handle("PUT /2015-03-31/functions/{name}/aliases/{alias}", a.updateAlias)
	handle("DELETE /2015-03-31/functions/{name}/aliases/{alias}", a.deleteAlias)
	// Per-qualifier settings (policy.go, functionurl.go, eventinvoke.go, provisioned.go), layer
	// policies (layerpolicy.go), code signing (codesigning.go), recursion config (recursion.go).
	handle("POST /2015-03-31/functions/{name}/policy", a.addPermission)
	handle("GET /2015-03-31/functions/{name}/policy", a.getPolicy)
	handle("DELETE /2015-03-31/functions/{name}/policy/{sid}", a.removePermission)
	handle("POST /2021-10-31/functions/{name}/url", a.createFunctionURLConfig)
	handle("GET /2021-10-31/functions/{name}/url", a.getFunctionURLConfig)
	handle("PUT /2021-10-31/functions/{name}/url", a.updateFunctionURLConfig)
	handle("DELETE /2021-10-31/functions/{name}/url", a.deleteFunctionURLConfig)
	handle("GET /2021-10-31/functions/{name}/urls", a.listFunctionURLConfigs)
	handle("PUT /2019-09-25/functions/{name}/event-invoke-config", a.putEventInvokeConfig)
	handle("POST /2019-09-25/functions/{name}/event-invoke-config", a.updateEventInvokeConfig)
	handle("GET /2019-09-25/functions/{name}/event-invoke-config", a.getEventInvokeConfig)
	handle("DELETE /2019-09-25/functions/{name}/event-invoke-config", a.deleteEventInvokeConfig)
	handle("GET /2019-09-25/functions/{name}/event-invoke-config/list", a.listEventInvokeConfigs)
	handle("PUT /2019-09-30/functions/{name}/provisioned-concurrency", a.putProvisionedConcurrency)
	handle("GET /2019-09-30/functions/{name}/provisioned-concurrency", a.getOrListProvisionedConcurrency)
	handle("DELETE /2019-09-30/functions/{name}/provisioned-concurrency", a.deleteProvisionedConcurrency)
	handle("POST /2018-10-31/layers/{layer}/versions/{version}/policy", a.addLayerVersionPermission)
	handle("GET /2018-10-31/layers/{layer}/versions/{version}/policy", a.getLayerVersionPolicy)
	handle("DELETE /2018-10-31/layers/{layer}/versions/{version}/policy/{sid}", a.removeLayerVersionPermission)
	handle("POST /2020-04-22/code-signing-configs/{$}", a.createCodeSigningConfig)
	handle("POST /2020-04-22/code-signing-configs", a.createCodeSigningConfig)
	handle("GET /2020-04-22/code-signing-configs/{$}", a.listCodeSigningConfigs)
	handle("GET /2020-04-22/code-signing-configs", a.listCodeSigningConfigs)
	handle("GET /2020-04-22/code-signing-configs/{arn}", a.getCodeSigningConfig)
	handle("PUT /2020-04-22/code-signing-configs/{arn}", a.updateCodeSigningConfig)
	handle("DELETE /2020-04-22/code-signing-configs/{arn}", a.deleteCodeSigningConfig)
	handle("GET /2020-04-22/code-signing-configs/{arn}/functions", a.listFunctionsByCodeSigningConfig)
	handle("PUT /2020-06-30/functions/{name}/code-signing-config", a.putFunctionCodeSigningConfig)
	handle("GET /2020-06-30/functions/{name}/code-signing-config", a.getFunctionCodeSigningConfig)
	handle("DELETE /2020-06-30/functions/{name}/code-signing-config", a.deleteFunctionCodeSigningConfig)
	handle("PUT /2024-08-31/functions/{name}/recursion-config", a.putFunctionRecursionConfig)
	handle("GET /2024-08-31/functions/{name}/recursion-config", a.getFunctionRecursionConfig)
	handle("POST /2015-03-31/event-source-mappings/{$}", a.createEventSourceMapping)
	handle("POST /2015-03-31/event-source-mappings", a.createEventSourceMapping)
	handle("GET /2015-03-31/event-source-mappings/{$}", a.listEventSourceMappings)
	handle("GET /2015-03-31/event-source-mappings", a.listEventSourceMappings)
	handle("GET /2015-03-31/event-source-mappings/{uuid}", a.eventSourceMapping)
	handle("PUT /2015-03-31/event-source-mappings/{uuid}", a.eventSourceMapping)
	handle("DELETE /2015-03-31/event-source-mappings/{uuid}", a.eventSourceMapping)
	handle("GET /faascope/health", a.health)
	handle("GET /faascope/instances", func(*http.ResponseController, *http.Request) (response, error) {
		return jsonResponse(http.StatusOK, a.p.Instances()), nil
	})
	handle("/", func(_ *http.ResponseController, r *http.Request) (response, error) {
		return response{}, &platform.APIError{Status: http.StatusNotFound, Code: "UnknownOperationException",
			Msg: "this local platform does not implement " + r.Method + " " + r.URL.Path}
	})
	return mux
}

func (a *api) health(*http.ResponseController, *http.Request) (response, error) {
	return jsonResponse(http.StatusOK, a.p.Status()), nil
}
