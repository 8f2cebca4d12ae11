package platform

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// apiError is an AWS-style error: botocore reads the code from X-Amzn-ErrorType.
type apiError struct {
	Status int
	Code   string
	Msg    string
	Reason string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Msg }

// awsError maps an error of the core, or of parsing a request, to the AWS error botocore
// expects for it.
func awsError(err error) *apiError {
	var (
		ae       *apiError
		notFound *notFoundError
		conflict *conflictError
		invalid  *invalidParameterError
		timeout  *errBodyTimeout
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errReservedThrottled):
		return &apiError{http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", "ReservedFunctionConcurrentInvocationLimitExceeded"}
	case errors.Is(err, errThrottled):
		return &apiError{http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", "ConcurrentInvocationLimitExceeded"}
	case errors.As(err, &notFound):
		return &apiError{http.StatusNotFound, "ResourceNotFoundException", err.Error(), ""}
	case errors.As(err, &conflict):
		return &apiError{http.StatusConflict, "ResourceConflictException", err.Error(), ""}
	case errors.As(err, &invalid):
		return &apiError{http.StatusBadRequest, "InvalidParameterValueException", err.Error(), ""}
	case errors.As(err, &timeout):
		// botocore counts RequestTimeoutException among the transient errors it retries.
		return &apiError{http.StatusRequestTimeout, "RequestTimeoutException", err.Error(), ""}
	default:
		return &apiError{http.StatusInternalServerError, "ServiceException", err.Error(), ""}
	}
}

func writeAPIError(w http.ResponseWriter, err error) {
	ae := awsError(err)
	w.Header().Set("X-Amzn-ErrorType", ae.Code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.Status)
	body := map[string]string{"Type": "User", "Message": ae.Msg, "message": ae.Msg}
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

// Handler is the Lambda REST API subset plus a few /faascope/ endpoints.
func (p *Platform) Handler() http.Handler {
	mux := p.routes()
	if p.cfg.Token == "" {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !authorized(r, p.cfg.Token) {
			writeAPIError(w, &apiError{http.StatusForbidden, "UnrecognizedClientException",
				"The security token included in the request is invalid.", ""})
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
// request, calls the platform's core (functions.go, platform.go) and maps the core's errors to
// AWS errors with awsError. None touches the platform's state or its lock.
func (p *Platform) routes() *http.ServeMux {
	// Exact patterns only ({$} ends a path that ends in a slash): a request for an operation the
	// platform does not implement (AddPermission, GetPolicy, event source mappings, function
	// URLs, …) falls through to "/" and is refused as Lambda refuses an unknown operation,
	// whatever function it names, instead of being taken for another operation.
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions", p.createFunction)
	mux.HandleFunc("POST /2015-03-31/functions/{$}", p.createFunction)
	mux.HandleFunc("GET /2015-03-31/functions/{$}", p.listFunctions)
	mux.HandleFunc("GET /2015-03-31/functions", p.listFunctions)
	mux.HandleFunc("GET /2015-03-31/functions/{name}", p.getFunction)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/configuration", p.getConfiguration)
	mux.HandleFunc("PUT /2015-03-31/functions/{name}/configuration", p.updateConfiguration)
	mux.HandleFunc("PUT /2015-03-31/functions/{name}/code", p.updateCode)
	mux.HandleFunc("DELETE /2015-03-31/functions/{name}", p.deleteFunction)
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", p.invoke)
	mux.HandleFunc("GET /2017-03-31/tags/{arn}", p.listTags)
	mux.HandleFunc("POST /2017-03-31/tags/{arn}", p.tagResource)
	mux.HandleFunc("DELETE /2017-03-31/tags/{arn}", p.untagResource)
	mux.HandleFunc("PUT /2017-10-31/functions/{name}/concurrency", p.putFunctionConcurrency)
	mux.HandleFunc("DELETE /2017-10-31/functions/{name}/concurrency", p.deleteFunctionConcurrency)
	mux.HandleFunc("GET /2019-09-30/functions/{name}/concurrency", p.getFunctionConcurrency)
	mux.HandleFunc("GET /2016-08-19/account-settings", p.getAccountSettings)
	mux.HandleFunc("GET /2016-08-19/account-settings/", p.getAccountSettings)
	mux.HandleFunc("POST /2018-10-31/layers/{layer}/versions", p.publishLayerVersion)
	mux.HandleFunc("GET /2018-10-31/layers/{layer}/versions", p.listLayerVersions)
	mux.HandleFunc("GET /2018-10-31/layers/{layer}/versions/{version}", p.getLayerVersion)
	mux.HandleFunc("DELETE /2018-10-31/layers/{layer}/versions/{version}", p.deleteLayerVersion)
	mux.HandleFunc("GET /2018-10-31/layers", p.listLayers)
	mux.HandleFunc("POST /2015-03-31/functions/{name}/versions", p.publishVersion)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/versions", p.listVersions)
	mux.HandleFunc("POST /2015-03-31/functions/{name}/aliases", p.createAlias)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/aliases", p.listAliases)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/aliases/{alias}", p.getAlias)
	mux.HandleFunc("PUT /2015-03-31/functions/{name}/aliases/{alias}", p.updateAlias)
	mux.HandleFunc("DELETE /2015-03-31/functions/{name}/aliases/{alias}", p.deleteAlias)
	mux.HandleFunc("GET /faascope/health", p.health)
	mux.HandleFunc("GET /faascope/instances", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, p.Instances())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, &apiError{http.StatusNotFound, "UnknownOperationException",
			"this local platform does not implement " + r.Method + " " + r.URL.Path, ""})
	})
	return mux
}

func (p *Platform) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, p.Status())
}

// createRequest is CreateFunction's body (fields this platform uses; others are ignored
// as AWS ignores what does not apply).
type createRequest struct {
	FunctionName     string            `json:"FunctionName"`
	Runtime          string            `json:"Runtime"`
	Role             string            `json:"Role"`
	Handler          string            `json:"Handler"`
	Description      string            `json:"Description"`
	Timeout          *int              `json:"Timeout"`
	MemorySize       *int              `json:"MemorySize"`
	Environment      *Environment      `json:"Environment"`
	EphemeralStorage *EphemeralStorage `json:"EphemeralStorage"`
	Architectures    []string          `json:"Architectures"`
	Tags             map[string]string `json:"Tags"`
	PackageType      string            `json:"PackageType"`
	Publish          bool              `json:"Publish"`
	Layers           []string          `json:"Layers"`
	// Code.ZipFile is streamed to a staging file while the body is read (readCodeRequest);
	// its place here is left empty.
	Code codeLocation `json:"Code"`
}

var supportedRuntimes = map[string]bool{"provided.al2023": true, "provided.al2": true, "provided": true}

func (p *Platform) createFunction(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	zip, err := p.readCodeRequest(w, r, "CreateFunction", []string{"Code", "ZipFile"}, &req)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	// Removes the staged package unless the core adopted it.
	defer zip.discard()
	region := requestRegion(r)
	name := req.FunctionName
	if strings.Contains(name, ":") { // an ARN or a partial ARN names the function too
		ref, err := parseFunctionRef(name, "", region)
		if err == nil && ref.Qualifier != "" {
			err = errValidation(name, "functionName", "Member must satisfy regular expression pattern: "+functionNamePattern)
		}
		if err != nil {
			writeAPIError(w, err)
			return
		}
		name = ref.Name
	}
	if err := checkFunctionName(name); err != nil { // first: a request with several faults keeps getting the same error
		writeAPIError(w, err)
		return
	}
	if req.PackageType == "Image" {
		writeAPIError(w, errInvalid("PackageType: this local platform runs .zip packages only"))
		return
	}
	if !supportedRuntimes[req.Runtime] {
		writeAPIError(w, errInvalid("Runtime %q: the local platform runs custom runtimes (provided.al2023, provided.al2)", req.Runtime))
		return
	}
	code, err := p.codeOf(r.Context(), zip, req.Code, "Code") // inline or from S3 (s3code.go)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	arch := hostArch()
	if len(req.Architectures) > 0 {
		arch = req.Architectures[0]
		if len(req.Architectures) != 1 || (arch != "x86_64" && arch != "arm64") {
			writeAPIError(w, errInvalid("Architectures must be [\"x86_64\"] or [\"arm64\"]"))
			return
		}
		if arch != hostArch() {
			writeAPIError(w, errInvalid("Architectures: this local platform runs %s functions only, not %s", hostArch(), arch))
			return
		}
	}
	cfg, err := p.CreateFunction(CreateFunctionInput{
		Name: name, Region: region, Publish: req.Publish, Runtime: req.Runtime, Role: req.Role, Handler: req.Handler,
		Description: req.Description, Architecture: arch, Tags: req.Tags, Code: code, Layers: req.Layers,
		Settings: Settings{Timeout: req.Timeout, MemorySize: req.MemorySize,
			EphemeralStorage: req.EphemeralStorage, Environment: req.Environment},
	})
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, cfg)
}

// decodeBody reads a small JSON body (every request but the code ones and Invoke) under the
// body deadlines and maxRequestFields.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	tb := newTimedBody(w, r, bodyStallTimeout, bodyTotalTimeout)
	defer tb.done()
	body, err := io.ReadAll(io.LimitReader(tb, maxRequestFields+1))
	var te *errBodyTimeout
	if errors.As(err, &te) {
		return err
	}
	if err != nil {
		return errInvalid("could not read the request: %v", err)
	}
	if len(body) > maxRequestFields {
		tb.drain()
		return tooLarge(fmt.Sprintf("Request must be smaller than %d bytes for this operation (a limit of the local platform)", maxRequestFields))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalid("malformed JSON: %v", err)
	}
	return nil
}

// functionRef parses the request's FunctionName and Qualifier in its region (names.go).
func functionRef(r *http.Request) (funcRef, error) {
	return parseFunctionRef(r.PathValue("name"), r.URL.Query().Get("Qualifier"), requestRegion(r))
}

// latestRef is functionRef for an operation on the function itself, which takes no version
// or alias.
func latestRef(r *http.Request) (fnKey, error) {
	ref, err := functionRef(r)
	if err == nil {
		err = notLatestOnly(ref)
	}
	return ref.fnKey, err
}

// maxItems reads a MaxItems query parameter: Lambda's default page is 50; limit is the
// operation's largest (10,000 for functions, versions and aliases; 50 for layers).
func maxItems(r *http.Request, limit int) int {
	if v, err := strconv.Atoi(r.URL.Query().Get("MaxItems")); err == nil && v > 0 && v <= limit {
		return v
	}
	return 50
}

// writePage answers a List operation: the page under key, and NextMarker unless it is the last.
func writePage(w http.ResponseWriter, key string, list any, next string) {
	out := map[string]any{key: list}
	if next != "" {
		out["NextMarker"] = next
	}
	writeJSON(w, http.StatusOK, out)
}

func (p *Platform) getFunction(w http.ResponseWriter, r *http.Request) {
	ref, err := functionRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	fn, err := p.GetFunction(ref)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	out := map[string]any{
		"Configuration": fn.Config,
		"Code":          map[string]string{"RepositoryType": "S3", "Location": "file://" + fn.CodePath},
		"Tags":          fn.Tags,
	}
	if fn.ReservedConcurrency != nil {
		out["Concurrency"] = map[string]int{"ReservedConcurrentExecutions": *fn.ReservedConcurrency}
	}
	writeJSON(w, http.StatusOK, out)
}

func (p *Platform) getConfiguration(w http.ResponseWriter, r *http.Request) {
	ref, err := functionRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	fn, err := p.GetFunction(ref)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, fn.Config)
}

func (p *Platform) listFunctions(w http.ResponseWriter, r *http.Request) {
	list, next := p.ListFunctions(requestRegion(r), r.URL.Query().Get("Marker"), maxItems(r, 10000))
	writePage(w, "Functions", list, next)
}

type updateConfigRequest struct {
	Timeout          *int              `json:"Timeout"`
	MemorySize       *int              `json:"MemorySize"`
	Environment      *Environment      `json:"Environment"`
	EphemeralStorage *EphemeralStorage `json:"EphemeralStorage"`
	Description      *string           `json:"Description"`
	Role             *string           `json:"Role"`
	Handler          *string           `json:"Handler"`
	Runtime          *string           `json:"Runtime"`
	Layers           *[]string         `json:"Layers"`
}

func (p *Platform) updateConfiguration(w http.ResponseWriter, r *http.Request) {
	var req updateConfigRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if req.Runtime != nil && !supportedRuntimes[*req.Runtime] {
		writeAPIError(w, errInvalid("Runtime %q: the local platform runs custom runtimes (provided.al2023, provided.al2)", *req.Runtime))
		return
	}
	cfg, err := p.UpdateConfiguration(key, ConfigurationUpdate{
		Settings: Settings{Timeout: req.Timeout, MemorySize: req.MemorySize,
			EphemeralStorage: req.EphemeralStorage, Environment: req.Environment},
		Description: req.Description, Role: req.Role, Handler: req.Handler, Runtime: req.Runtime,
		Layers: req.Layers,
	})
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

func (p *Platform) updateCode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Architectures []string `json:"Architectures"`
		codeLocation
		Publish bool `json:"Publish"`
	}
	zip, err := p.readCodeRequest(w, r, "UpdateFunctionCode", []string{"ZipFile"}, &req)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	defer zip.discard() // unless the core adopted it
	key, err := latestRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	code, err := p.codeOf(r.Context(), zip, req.codeLocation, "Code") // inline or from S3 (s3code.go)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	cfg, err := p.UpdateCode(key, code, req.Publish)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cfg)
}

func (p *Platform) deleteFunction(w http.ResponseWriter, r *http.Request) {
	ref, err := functionRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if err := p.DeleteFunction(ref); err != nil {
		writeAPIError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Platform) invoke(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	ref, err := functionRef(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	limit, op := maxPayload, "InvokeFunction"
	if typ == "Event" {
		limit = maxAsyncPayload
	}
	tb := newTimedBody(w, r, bodyStallTimeout, bodyTotalTimeout)
	payload, err := io.ReadAll(io.LimitReader(tb, int64(limit)+1))
	if len(payload) > limit {
		tb.drain()
	}
	tb.done() // the invocation itself may run up to 900 s: no deadline on the connection then
	var te *errBodyTimeout
	if errors.As(err, &te) {
		writeAPIError(w, err)
		return
	}
	if err != nil {
		writeAPIError(w, errInvalid("could not read the payload: %v", err))
		return
	}
	if len(payload) > limit {
		writeAPIError(w, &apiError{http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the %s operation", limit, op), ""})
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if err := checkPayload(payload); err != nil {
		writeAPIError(w, err)
		return
	}
	clientContext, err := decodeClientContext(r.Header.Get("X-Amz-Client-Context"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	req := InvokeRequest{Name: ref.Name, Region: ref.Region, Qualifier: ref.Qualifier, Payload: payload,
		ClientContext: clientContext, Received: received, NoReport: r.Header.Get("X-Amz-Log-Type") != "Tail"}
	switch typ {
	case "", "RequestResponse":
	case "Event":
		// Lambda passes the client context to synchronous invocations only.
		req.ClientContext, req.RequestID = "", newRevision()
		if err := p.InvokeAsync(req); err != nil {
			writeAPIError(w, err)
			return
		}
		fe := p.frontEndFor(req)
		waitFrontEnd(r.Context(), fe) // frontend.go: the modelled request path, before the 202
		w.Header().Set("X-Faascope-Front-End-Ms", ms(fe))
		w.Header().Set("X-Amzn-RequestId", req.RequestID)
		w.WriteHeader(http.StatusAccepted)
		return
	case "DryRun":
		if err := p.CheckInvoke(req); err != nil {
			writeAPIError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		writeAPIError(w, errInvalid("X-Amz-Invocation-Type %q must be RequestResponse, Event or DryRun", typ))
		return
	}
	res, meta, err := p.Invoke(r.Context(), req)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	// frontend.go: the modelled request path, after the function has returned (outside its
	// Duration and Billed Duration) and the instance is free again
	fe := p.frontEndFor(req)
	waitFrontEnd(r.Context(), fe)
	h := w.Header()
	h.Set("X-Faascope-Front-End-Ms", ms(fe))
	h.Set("Content-Type", "application/json")
	h.Set("X-Amz-Executed-Version", meta.Version)
	h.Set("X-Amzn-RequestId", meta.RequestID)
	if res.FuncError != "" {
		h.Set("X-Amz-Function-Error", res.FuncError)
	}
	if r.Header.Get("X-Amz-Log-Type") == "Tail" {
		h.Set("X-Amz-Log-Result", base64.StdEncoding.EncodeToString(tail(logText(meta), 4096)))
	}
	// faascope's view one level deeper than Lambda shows: which instance, cold or warm, and
	// where the time went on the platform's side.
	h.Set("X-Faascope-Instance-Id", meta.InstanceID)
	h.Set("X-Faascope-Cold", strconv.FormatBool(meta.Cold))
	h.Set("X-Faascope-Setup-Ms", ms(meta.Setup))
	h.Set("X-Faascope-Init-Ms", ms(meta.Init))
	if len(meta.SetupSteps) > 0 {
		h.Set("X-Faascope-Setup-Steps", stepsHeader(meta.SetupSteps))
	}
	h.Set("X-Faascope-Invoke-Steps", stepsHeader(meta.Steps))
	if !meta.Delivered.IsZero() && !meta.Answered.IsZero() {
		h.Set("X-Faascope-Delivered-Ns", strconv.FormatInt(meta.Delivered.UnixNano(), 10))
		h.Set("X-Faascope-Answered-Ns", strconv.FormatInt(meta.Answered.UnixNano(), 10))
	}
	if meta.Modelled > 0 {
		h.Set("X-Faascope-Modelled-Ms", ms(meta.Modelled))
	}
	h.Set("X-Faascope-Duration-Ms", ms(meta.Duration))
	if meta.NetShaped {
		netBucketHeaders(h, meta.NetIn, meta.NetOut)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(res.Payload)
}

// stepsHeader renders steps as "name=ms,name=ms" (X-Faascope-Setup-Steps, X-Faascope-Invoke-Steps).
func stepsHeader(steps []Step) string {
	var b strings.Builder
	for i, s := range steps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s.Name)
		b.WriteByte('=')
		b.WriteString(ms(s.Dur))
	}
	return b.String()
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// logText renders an invocation's log as Lambda does: START, the function's output, END, REPORT.
func logText(m invokeMeta) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "START RequestId: %s Version: %s\n", m.RequestID, m.Version)
	b.Write(m.Logs)
	fmt.Fprintf(&b, "END RequestId: %s\n", m.RequestID)
	durMs := float64(m.Duration) / 1e6
	var init time.Duration
	if m.Cold {
		init = m.Init
	}
	billed := billedMs(init, m.Duration) // billing.go: a cold start's Init Duration is billed too
	fmt.Fprintf(&b, "REPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %d ms\tMemory Size: %d MB\tMax Memory Used: %d MB",
		m.RequestID, durMs, billed, m.MemoryMB, (m.PeakBytes+(1<<20)-1)>>20)
	if m.Cold {
		fmt.Fprintf(&b, "\tInit Duration: %.2f ms", float64(m.Init)/1e6)
	}
	b.WriteString("\t\n")
	return []byte(b.String())
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
