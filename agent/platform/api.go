package platform

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime"
	"sort"
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

func errNotFound(name string) error {
	return &apiError{http.StatusNotFound, "ResourceNotFoundException", "Function not found: " + functionARN(name), ""}
}

func errInvalid(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, "InvalidParameterValueException", fmt.Sprintf(format, args...), ""}
}

func writeAPIError(w http.ResponseWriter, err error) {
	var ae *apiError
	if errors.Is(err, errThrottled) {
		ae = &apiError{http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", "ConcurrentInvocationLimitExceeded"}
	} else if !errors.As(err, &ae) {
		ae = &apiError{http.StatusInternalServerError, "ServiceException", err.Error(), ""}
	}
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

// maxCodeRequest bounds CreateFunction/UpdateFunctionCode bodies (base64 zip in JSON).
// Larger than Lambda's 50 MB so image-size studies can pad packages.
const maxCodeRequest = 1 << 30

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

func (p *Platform) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions", p.createFunction)
	mux.HandleFunc("POST /2015-03-31/functions/", p.createFunction)
	mux.HandleFunc("GET /2015-03-31/functions/", p.listFunctions)
	mux.HandleFunc("GET /2015-03-31/functions", p.listFunctions)
	mux.HandleFunc("GET /2015-03-31/functions/{name}", p.getFunction)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/configuration", p.getConfiguration)
	mux.HandleFunc("PUT /2015-03-31/functions/{name}/configuration", p.updateConfiguration)
	mux.HandleFunc("PUT /2015-03-31/functions/{name}/code", p.updateCode)
	mux.HandleFunc("DELETE /2015-03-31/functions/{name}", p.deleteFunction)
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", p.invoke)
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
	p.mu.Lock()
	n, inflight := len(p.instances), p.inFlight
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"ok": true, "profile": p.cfg.DefaultProfile, "isolation": p.cfg.Isolation,
		"cgroup_version": CgroupVersion(), "keep_alive_s": p.cfg.KeepAlive.Seconds(),
		"concurrency": p.cfg.Concurrency, "instances": n, "in_flight": inflight,
		"data_dir": p.cfg.DataDir, "arch": hostArch(), "pid": pid(),
		"host_network": p.cfg.HostNetwork || p.cfg.Isolation != "namespaces", "expose": p.cfg.Expose,
		"net_shape": p.cfg.NetShape, "shared_dir": p.cfg.SharedDir,
	})
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
	Code             struct {
		ZipFile  string `json:"ZipFile"`
		S3Bucket string `json:"S3Bucket"`
		ImageUri string `json:"ImageUri"`
	} `json:"Code"`
}

var supportedRuntimes = map[string]bool{"provided.al2023": true, "provided.al2": true, "provided": true}

func hostArch() string {
	if runtime.GOARCH == "arm64" {
		return "arm64"
	}
	return "x86_64"
}

func (p *Platform) createFunction(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := decodeBody(r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	if !functionNameRE.MatchString(req.FunctionName) {
		writeAPIError(w, errInvalid("FunctionName %q must match [a-zA-Z0-9_-]{1,64}", req.FunctionName))
		return
	}
	if req.PackageType == "Image" || req.Code.ImageUri != "" || req.Code.S3Bucket != "" {
		writeAPIError(w, errInvalid("Code: this local platform takes the package inline as Code.ZipFile"))
		return
	}
	if !supportedRuntimes[req.Runtime] {
		writeAPIError(w, errInvalid("Runtime %q: the local platform runs custom runtimes (provided.al2023, provided.al2)", req.Runtime))
		return
	}
	zip, err := base64.StdEncoding.DecodeString(req.Code.ZipFile)
	if err != nil || len(zip) == 0 {
		writeAPIError(w, errInvalid("Code.ZipFile must be a base64-encoded zip file"))
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
	f := &Function{Tags: req.Tags, Config: FunctionConfiguration{
		FunctionName: req.FunctionName, FunctionArn: functionARN(req.FunctionName),
		Runtime: req.Runtime, Role: req.Role, Handler: req.Handler, Description: req.Description,
		Timeout: defaultTimeoutS, MemorySize: defaultMemoryMB, Version: "$LATEST",
		State: "Active", LastUpdateStatus: "Successful", PackageType: "Zip",
		Architectures: []string{arch}, EphemeralStorage: EphemeralStorage{Size: minEphemeralMB},
	}}
	if f.Tags == nil {
		f.Tags = map[string]string{}
	}
	if err := applyConfig(&f.Config, req.Timeout, req.MemorySize, req.EphemeralStorage, req.Environment); err != nil {
		writeAPIError(w, err)
		return
	}
	if err := p.checkTags(f); err != nil {
		writeAPIError(w, err)
		return
	}
	setCode(&f.Config, zip)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, exists := p.functions[f.Config.FunctionName]; exists {
		writeAPIError(w, &apiError{http.StatusConflict, "ResourceConflictException", "Function already exist: " + f.Config.FunctionName, ""})
		return
	}
	if err := p.store.save(f, zip); err != nil {
		writeAPIError(w, err)
		return
	}
	p.functions[f.Config.FunctionName] = f
	writeJSON(w, http.StatusCreated, f.Config)
}

// checkTags validates the tags that steer the local platform.
func (p *Platform) checkTags(f *Function) error {
	if v, ok := f.Tags[TagProfile]; ok {
		if _, err := LimitsFor(v, f.Config.MemorySize, f.Config.EphemeralStorage.Size); err != nil {
			return errInvalid("Tags[%s]: %v", TagProfile, err)
		}
	}
	if v, ok := f.Tags[TagKeepAlive]; ok {
		if s, err := strconv.ParseFloat(v, 64); err != nil || s < 0 {
			return errInvalid("Tags[%s] must be a number of seconds ≥ 0, got %q", TagKeepAlive, v)
		}
	}
	if v, ok := f.Tags[TagExpose]; ok {
		if _, err := ParsePorts(v); err != nil {
			return errInvalid("Tags[%s]: %v", TagExpose, err)
		}
	}
	if v, ok := f.Tags[TagNetShape]; ok {
		if _, err := ParseNetShape(v); err != nil {
			return errInvalid("Tags[%s]: %v", TagNetShape, err)
		}
	}
	if _, err := LimitsFor(p.profileOf(f), f.Config.MemorySize, f.Config.EphemeralStorage.Size); err != nil {
		return errInvalid("MemorySize: %v", err)
	}
	return nil
}

func applyConfig(c *FunctionConfiguration, timeout, memory *int, eph *EphemeralStorage, env *Environment) error {
	if timeout != nil {
		if *timeout < minTimeoutS || *timeout > maxTimeoutS {
			return errInvalid("Timeout %d must be between %d and %d seconds", *timeout, minTimeoutS, maxTimeoutS)
		}
		c.Timeout = *timeout
	}
	if memory != nil {
		if *memory < minMemoryMB || *memory > maxMemoryMB {
			return errInvalid("MemorySize %d must be between %d and %d MB", *memory, minMemoryMB, maxMemoryMB)
		}
		c.MemorySize = *memory
	}
	if eph != nil {
		if eph.Size < minEphemeralMB || eph.Size > maxEphemeralMB {
			return errInvalid("EphemeralStorage.Size %d must be between %d and %d MB", eph.Size, minEphemeralMB, maxEphemeralMB)
		}
		c.EphemeralStorage = *eph
	}
	if env != nil {
		for k := range env.Variables {
			if strings.HasPrefix(k, "AWS_LAMBDA_") || k == "AWS_REGION" || k == "_HANDLER" {
				return errInvalid("Environment: %s is a reserved variable", k)
			}
		}
		c.Environment = env
	}
	c.LastModified = lambdaTime(time.Now())
	c.RevisionId = newRevision()
	return nil
}

func setCode(c *FunctionConfiguration, zip []byte) {
	c.CodeSize = int64(len(zip))
	c.CodeSha256 = codeSha256(zip)
}

func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCodeRequest+1))
	if err != nil {
		return errInvalid("could not read the request: %v", err)
	}
	if len(body) > maxCodeRequest {
		return &apiError{http.StatusRequestEntityTooLarge, "RequestTooLargeException", "request body too large", ""}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalid("malformed JSON: %v", err)
	}
	return nil
}

func (p *Platform) lookup(name string) (*Function, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.functions[name]
	if !ok {
		return nil, errNotFound(name)
	}
	return f, nil
}

func (p *Platform) getFunction(w http.ResponseWriter, r *http.Request) {
	f, err := p.lookup(r.PathValue("name"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	p.mu.Lock()
	out := map[string]any{
		"Configuration": f.Config,
		"Code":          map[string]string{"RepositoryType": "S3", "Location": "file://" + p.store.codePath(f.Config.FunctionName)},
		"Tags":          f.Tags,
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (p *Platform) getConfiguration(w http.ResponseWriter, r *http.Request) {
	f, err := p.lookup(r.PathValue("name"))
	if err != nil {
		writeAPIError(w, err)
		return
	}
	p.mu.Lock()
	c := f.Config
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, c)
}

func (p *Platform) listFunctions(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	names := make([]string, 0, len(p.functions))
	for n := range p.functions {
		names = append(names, n)
	}
	sort.Strings(names)
	start := 0
	if m := r.URL.Query().Get("Marker"); m != "" {
		start = sort.SearchStrings(names, m)
	}
	max := 50
	if v, err := strconv.Atoi(r.URL.Query().Get("MaxItems")); err == nil && v > 0 && v <= 10000 {
		max = v
	}
	out := map[string]any{}
	list := []FunctionConfiguration{}
	for i := start; i < len(names) && len(list) < max; i++ {
		list = append(list, p.functions[names[i]].Config)
		if len(list) == max && i+1 < len(names) {
			out["NextMarker"] = names[i+1]
		}
	}
	p.mu.Unlock()
	out["Functions"] = list
	writeJSON(w, http.StatusOK, out)
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
}

// updateConfiguration changes settings; like AWS, the next invocation gets a fresh instance.
func (p *Platform) updateConfiguration(w http.ResponseWriter, r *http.Request) {
	var req updateConfigRequest
	if err := decodeBody(r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	if req.Runtime != nil && !supportedRuntimes[*req.Runtime] {
		writeAPIError(w, errInvalid("Runtime %q: the local platform runs custom runtimes (provided.al2023, provided.al2)", *req.Runtime))
		return
	}
	p.update(w, r.PathValue("name"), nil, func(next *Function) error {
		if err := applyConfig(&next.Config, req.Timeout, req.MemorySize, req.EphemeralStorage, req.Environment); err != nil {
			return err
		}
		for dst, src := range map[*string]*string{&next.Config.Description: req.Description,
			&next.Config.Role: req.Role, &next.Config.Handler: req.Handler, &next.Config.Runtime: req.Runtime} {
			if src != nil {
				*dst = *src
			}
		}
		return p.checkTags(next)
	})
}

func (p *Platform) updateCode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ZipFile       string   `json:"ZipFile"`
		Architectures []string `json:"Architectures"`
	}
	if err := decodeBody(r, &req); err != nil {
		writeAPIError(w, err)
		return
	}
	zip, err := base64.StdEncoding.DecodeString(req.ZipFile)
	if err != nil || len(zip) == 0 {
		writeAPIError(w, errInvalid("ZipFile must be a base64-encoded zip file"))
		return
	}
	p.update(w, r.PathValue("name"), zip, func(next *Function) error {
		setCode(&next.Config, zip)
		next.Config.LastModified = lambdaTime(time.Now())
		next.Config.RevisionId = newRevision()
		return nil
	})
}

// update applies change to a copy of the function, persists it (with a new package when zip is
// not nil), and retires the warm instances of the old generation.
func (p *Platform) update(w http.ResponseWriter, name string, zip []byte, change func(*Function) error) {
	p.mu.Lock()
	f, ok := p.functions[name]
	if !ok {
		p.mu.Unlock()
		writeAPIError(w, errNotFound(name))
		return
	}
	next := *f
	err := change(&next)
	if err == nil {
		next.Generation++
		err = p.store.save(&next, zip)
	}
	if err != nil {
		p.mu.Unlock()
		writeAPIError(w, err)
		return
	}
	*f = next
	p.mu.Unlock()
	p.retireIdle(name)
	writeJSON(w, http.StatusOK, next.Config)
}

func (p *Platform) deleteFunction(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p.mu.Lock()
	_, ok := p.functions[name]
	if ok {
		delete(p.functions, name)
	}
	p.mu.Unlock()
	if !ok {
		writeAPIError(w, errNotFound(name))
		return
	}
	p.retireIdle(name)
	if err := p.store.remove(name); err != nil {
		log.Printf("delete %s: %v", name, err)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (p *Platform) invoke(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if q := r.URL.Query().Get("Qualifier"); q != "" && q != "$LATEST" {
		writeAPIError(w, errInvalid("Qualifier %q: the local platform has only $LATEST", q))
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil {
		writeAPIError(w, errInvalid("could not read the payload: %v", err))
		return
	}
	if len(payload) > maxPayload {
		writeAPIError(w, &apiError{http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the InvokeFunction operation", maxPayload), ""})
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	switch typ := r.Header.Get("X-Amz-Invocation-Type"); typ {
	case "", "RequestResponse":
	case "Event":
		if _, err := p.lookup(name); err != nil {
			writeAPIError(w, err)
			return
		}
		p.wg.Add(1)
		go p.invokeAsync(name, payload)
		w.WriteHeader(http.StatusAccepted)
		return
	case "DryRun":
		if _, err := p.lookup(name); err != nil {
			writeAPIError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		writeAPIError(w, errInvalid("X-Amz-Invocation-Type %q must be RequestResponse, Event or DryRun", typ))
		return
	}
	res, meta, err := p.Invoke(r.Context(), name, payload)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Amz-Executed-Version", "$LATEST")
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
	h.Set("X-Faascope-Duration-Ms", ms(meta.Duration))
	w.WriteHeader(http.StatusOK)
	w.Write(res.Payload)
}

// invokeAsync runs an Event invocation, waiting for capacity instead of failing, as Lambda's
// internal queue does.
func (p *Platform) invokeAsync(name string, payload []byte) {
	defer p.wg.Done()
	for {
		_, meta, err := p.Invoke(p.ctx, name, payload)
		if errors.Is(err, errThrottled) {
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			log.Printf("async invoke %s: %v", name, err)
		} else if len(meta.Logs) > 0 {
			log.Printf("async invoke %s on %s done in %s", name, meta.InstanceID, meta.Duration)
		}
		return
	}
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// logText renders an invocation's log as Lambda does: START, the function's output, END, REPORT.
func logText(m invokeMeta) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "START RequestId: %s Version: $LATEST\n", m.RequestID)
	b.Write(m.Logs)
	fmt.Fprintf(&b, "END RequestId: %s\n", m.RequestID)
	durMs := float64(m.Duration) / 1e6
	billed := int64(durMs)
	if float64(billed) < durMs {
		billed++ // Lambda bills per started millisecond
	}
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

