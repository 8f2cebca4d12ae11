package lambdaapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/faascope/faascope/agent/platform"
)

// Handlers of the functions' operations (CreateFunction, GetFunction, ListFunctions,
// UpdateFunctionConfiguration, UpdateFunctionCode, DeleteFunction) and the request parsing the
// handlers share.

// createRequest is CreateFunction's body (fields this platform uses; others are ignored
// as AWS ignores what does not apply).
type createRequest struct {
	FunctionName     string                     `json:"FunctionName"`
	Runtime          string                     `json:"Runtime"`
	Role             string                     `json:"Role"`
	Handler          string                     `json:"Handler"`
	Description      string                     `json:"Description"`
	Timeout          *int                       `json:"Timeout"`
	MemorySize       *int                       `json:"MemorySize"`
	Environment      *platform.Environment      `json:"Environment"`
	EphemeralStorage *platform.EphemeralStorage `json:"EphemeralStorage"`
	Architectures    []string                   `json:"Architectures"`
	Tags             map[string]string          `json:"Tags"`
	PackageType      string                     `json:"PackageType"`
	Publish          bool                       `json:"Publish"`
	Layers           []string                   `json:"Layers"`
	LoggingConfig    *platform.LoggingConfig    `json:"LoggingConfig"`
	TracingConfig    *platform.TracingConfig    `json:"TracingConfig"`
	VpcConfig        *platform.VpcConfig        `json:"VpcConfig"`
	SnapStart        *platform.SnapStart        `json:"SnapStart"`
	// Code.ZipFile is streamed to a staging file while the body is read (ReadCodeRequest);
	// its place here is left empty.
	Code platform.CodeLocation `json:"Code"`
}

func (a *api) createFunction(rc *http.ResponseController, r *http.Request) (response, error) {
	var req createRequest
	zip, err := a.p.ReadCodeRequest(rc, r, "CreateFunction", []string{"Code", "ZipFile"}, &req)
	if err != nil {
		return response{}, err
	}
	// Removes the staged package unless the core adopted it.
	defer zip.Discard()
	region := platform.RequestRegion(r)
	name, err := platform.ParseCreateFunctionName(req.FunctionName, region) // first: a request with several faults keeps getting the same error
	if err != nil {
		return response{}, err
	}
	if err := platform.CheckModel(&req.Role, req.Architectures, req.SnapStart); err != nil { // the model before the service
		return response{}, err
	}
	if req.PackageType == "Image" {
		return response{}, platform.ErrInvalid("The PackageType parameter of Image is not offered by this local platform " +
			"(it runs .zip packages, not container images)")
	}
	if err := a.p.CheckRuntime(req.Runtime); err != nil { // the runtime table (runtimes.go)
		return response{}, err
	}
	code, err := a.p.CodeOf(r.Context(), zip, req.Code, "Code") // inline or from S3 (s3code.go)
	if err != nil {
		return response{}, err
	}
	if err := platform.CheckVpcConfig(req.VpcConfig); err != nil {
		return response{}, err
	}
	arch := platform.HostArch()
	if len(req.Architectures) > 0 {
		arch = req.Architectures[0]
		if arch != platform.HostArch() {
			return response{}, platform.ErrInvalid("Architectures: this local platform runs %s functions only, not %s", platform.HostArch(), arch)
		}
	}
	cfg, err := a.p.CreateFunction(platform.CreateFunctionInput{
		Name: name, Region: region, Publish: req.Publish, Runtime: req.Runtime, Role: req.Role, Handler: req.Handler,
		Description: req.Description, Architecture: arch, Tags: req.Tags, Code: code, Layers: req.Layers,
		Shape: platform.ShapeInput{LoggingConfig: req.LoggingConfig, TracingConfig: req.TracingConfig, SnapStart: req.SnapStart},
		Settings: platform.Settings{Timeout: req.Timeout, MemorySize: req.MemorySize,
			EphemeralStorage: req.EphemeralStorage, Environment: req.Environment},
	})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusCreated, cfg), nil
}

// decodeBody reads a small JSON body (every request but the code ones and Invoke) under the
// body deadlines and MaxRequestFields.
func decodeBody(rc *http.ResponseController, r *http.Request, v any) error {
	tb := platform.NewTimedBody(rc, r)
	defer tb.Done()
	body, err := io.ReadAll(io.LimitReader(tb, platform.MaxRequestFields+1))
	var te *platform.BodyTimeoutError
	if errors.As(err, &te) {
		return err
	}
	if err != nil {
		return platform.ErrInvalid("could not read the request: %v", err)
	}
	if len(body) > platform.MaxRequestFields {
		tb.Drain()
		return platform.TooLarge(fmt.Sprintf("Request must be smaller than %d bytes for this operation (a limit of the local platform)", platform.MaxRequestFields))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return platform.ErrInvalid("malformed JSON: %v", err)
	}
	return nil
}

// functionRef parses the request's FunctionName and Qualifier in its region (names.go).
func functionRef(r *http.Request) (platform.FunctionRef, error) {
	return platform.ParseFunctionRef(r.PathValue("name"), r.URL.Query().Get("Qualifier"), platform.RequestRegion(r))
}

// latestRef is functionRef for an operation on the function itself, which takes no version
// or alias.
func latestRef(r *http.Request) (platform.FunctionKey, error) {
	ref, err := functionRef(r)
	if err == nil {
		err = platform.NotLatestOnly(ref)
	}
	return ref.Key(), err
}

// maxItems reads a MaxItems query parameter: Lambda's default page is 50; limit is the
// operation's largest (10,000 for functions, versions and aliases; 50 for layers).
func maxItems(r *http.Request, limit int) int {
	if v, err := strconv.Atoi(r.URL.Query().Get("MaxItems")); err == nil && v > 0 && v <= limit {
		return v
	}
	return 50
}

func (a *api) getFunction(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	fn, err := a.p.GetFunction(ref)
	if err != nil {
		return response{}, err
	}
	out := map[string]any{
		"Configuration": fn.Config,
		"Code":          map[string]string{"RepositoryType": "S3", "Location": "file://" + fn.CodePath},
	}
	if len(fn.Tags) > 0 { // AWS leaves Tags out for an untagged function (the recorded get_function_response)
		out["Tags"] = fn.Tags
	}
	if fn.ReservedConcurrency != nil {
		out["Concurrency"] = map[string]int{"ReservedConcurrentExecutions": *fn.ReservedConcurrency}
	}
	return jsonResponse(http.StatusOK, out), nil
}

func (a *api) getConfiguration(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	fn, err := a.p.GetFunction(ref)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, fn.Config), nil
}

func (a *api) listFunctions(_ *http.ResponseController, r *http.Request) (response, error) {
	q := r.URL.Query()
	if err := platform.CheckFunctionVersionParam(q.Get("FunctionVersion")); err != nil {
		return response{}, err
	}
	var list []platform.FunctionConfiguration
	var next string
	if q.Get("FunctionVersion") == "ALL" { // $LATEST and the published versions
		list, next = a.p.ListFunctionsAll(platform.RequestRegion(r), q.Get("Marker"), maxItems(r, 10000))
	} else {
		list, next = a.p.ListFunctions(platform.RequestRegion(r), q.Get("Marker"), maxItems(r, 10000))
	}
	return page("Functions", list, next), nil
}

type updateConfigRequest struct {
	Timeout          *int                       `json:"Timeout"`
	MemorySize       *int                       `json:"MemorySize"`
	Environment      *platform.Environment      `json:"Environment"`
	EphemeralStorage *platform.EphemeralStorage `json:"EphemeralStorage"`
	Description      *string                    `json:"Description"`
	Role             *string                    `json:"Role"`
	Handler          *string                    `json:"Handler"`
	Runtime          *string                    `json:"Runtime"`
	Layers           *[]string                  `json:"Layers"`
	LoggingConfig    *platform.LoggingConfig    `json:"LoggingConfig"`
	TracingConfig    *platform.TracingConfig    `json:"TracingConfig"`
	RevisionId       string                     `json:"RevisionId"`
	VpcConfig        *platform.VpcConfig        `json:"VpcConfig"`
	SnapStart        *platform.SnapStart        `json:"SnapStart"`
}

func (a *api) updateConfiguration(rc *http.ResponseController, r *http.Request) (response, error) {
	var req updateConfigRequest
	if err := decodeBody(rc, r, &req); err != nil {
		return response{}, err
	}
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	if err := platform.CheckModel(req.Role, nil, req.SnapStart); err != nil { // the model before the service
		return response{}, err
	}
	if err := platform.CheckVpcConfig(req.VpcConfig); err != nil {
		return response{}, err
	}
	if req.Runtime != nil {
		if err := a.p.CheckRuntime(*req.Runtime); err != nil {
			return response{}, err
		}
	}
	cfg, err := a.p.UpdateConfiguration(key, platform.ConfigurationUpdate{
		Settings: platform.Settings{Timeout: req.Timeout, MemorySize: req.MemorySize,
			EphemeralStorage: req.EphemeralStorage, Environment: req.Environment},
		Description: req.Description, Role: req.Role, Handler: req.Handler, Runtime: req.Runtime,
		Layers:     req.Layers,
		Shape:      platform.ShapeInput{LoggingConfig: req.LoggingConfig, TracingConfig: req.TracingConfig, SnapStart: req.SnapStart},
		RevisionId: req.RevisionId,
	})
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, cfg), nil
}

func (a *api) updateCode(rc *http.ResponseController, r *http.Request) (response, error) {
	var req struct {
		Architectures []string `json:"Architectures"`
		platform.CodeLocation
		Publish    bool   `json:"Publish"`
		RevisionId string `json:"RevisionId"`
	}
	zip, err := a.p.ReadCodeRequest(rc, r, "UpdateFunctionCode", []string{"ZipFile"}, &req)
	if err != nil {
		return response{}, err
	}
	defer zip.Discard() // unless the core adopted it
	key, err := latestRef(r)
	if err != nil {
		return response{}, err
	}
	code, err := a.p.CodeOf(r.Context(), zip, req.CodeLocation, "Code") // inline or from S3 (s3code.go)
	if err != nil {
		return response{}, err
	}
	cfg, err := a.p.UpdateCodeIf(key, code, req.Publish, req.RevisionId)
	if err != nil {
		return response{}, err
	}
	return jsonResponse(http.StatusOK, cfg), nil
}

func (a *api) deleteFunction(_ *http.ResponseController, r *http.Request) (response, error) {
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	if err := a.p.DeleteFunction(ref); err != nil {
		return response{}, err
	}
	return noContent(), nil
}
