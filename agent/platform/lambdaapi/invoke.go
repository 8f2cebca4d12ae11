package lambdaapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/faascope/faascope/agent/platform"
)

// Invoke's handler, and what it checks of a request before the core runs anything, with
// Lambda's answers.

func (a *api) invoke(rc *http.ResponseController, r *http.Request) (response, error) {
	received := time.Now()
	ref, err := functionRef(r)
	if err != nil {
		return response{}, err
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	limit, op := platform.MaxPayload, "InvokeFunction"
	if typ == "Event" {
		limit = platform.MaxAsyncPayload
	}
	tb := platform.NewTimedBody(rc, r)
	payload, err := io.ReadAll(io.LimitReader(tb, int64(limit)+1))
	if len(payload) > limit {
		tb.Drain()
	}
	tb.Done() // the invocation itself may run up to 900 s: no deadline on the connection then
	var te *platform.BodyTimeoutError
	if errors.As(err, &te) {
		return response{}, err
	}
	if err != nil {
		return response{}, platform.ErrInvalid("could not read the payload: %v", err)
	}
	if len(payload) > limit {
		return response{}, &platform.APIError{Status: http.StatusRequestEntityTooLarge, Code: "RequestTooLargeException",
			Msg: fmt.Sprintf("Request must be smaller than %d bytes for the %s operation", limit, op)}
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if err := checkPayload(payload); err != nil {
		return response{}, err
	}
	clientContext, err := decodeClientContext(r.Header.Get("X-Amz-Client-Context"))
	if err != nil {
		return response{}, err
	}
	req := platform.InvokeRequest{Name: ref.Name, Region: ref.Region, Qualifier: ref.Qualifier, Payload: payload,
		ClientContext: clientContext, Received: received, NoReport: r.Header.Get("X-Amz-Log-Type") != "Tail"}
	switch typ {
	case "", "RequestResponse":
	case "Event":
		// Lambda passes the client context to synchronous invocations only.
		req.ClientContext, req.RequestID = "", platform.NewRequestID()
		if err := a.p.InvokeAsync(req); err != nil {
			return response{}, err
		}
		fe := a.p.FrontEndFor(req)
		platform.WaitFrontEnd(r.Context(), fe) // frontend.go: the modelled request path, before the 202
		h := http.Header{}
		h.Set("X-Faascope-Front-End-Ms", ms(fe))
		h.Set("X-Amzn-RequestId", req.RequestID)
		return response{status: http.StatusAccepted, header: h}, nil
	case "DryRun":
		if err := a.p.CheckInvoke(req); err != nil {
			return response{}, err
		}
		return noContent(), nil
	default:
		return response{}, platform.ErrInvalid("X-Amz-Invocation-Type %q must be RequestResponse, Event or DryRun", typ)
	}
	res, meta, err := a.p.Invoke(r.Context(), req)
	if err != nil {
		return response{}, err
	}
	// frontend.go: the modelled request path, after the function has returned (outside its
	// Duration and Billed Duration) and the instance is free again
	fe := a.p.FrontEndAfter(received, meta)
	platform.WaitFrontEnd(r.Context(), fe)
	h := http.Header{}
	h.Set("X-Faascope-Front-End-Ms", ms(fe))
	h.Set("Content-Type", "application/json")
	h.Set("X-Amz-Executed-Version", meta.Version)
	h.Set("X-Amzn-RequestId", meta.RequestID)
	if res.FuncError != "" {
		h.Set("X-Amz-Function-Error", res.FuncError)
	}
	if r.Header.Get("X-Amz-Log-Type") == "Tail" {
		h.Set("X-Amz-Log-Result", base64.StdEncoding.EncodeToString(tail(platform.LogText(meta), 4096)))
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
		platform.NetBucketHeaders(h, meta.NetIn, meta.NetOut)
	}
	return response{status: http.StatusOK, header: h, raw: res.Payload}, nil
}

// stepsHeader renders steps as "name=ms,name=ms" (X-Faascope-Setup-Steps, X-Faascope-Invoke-Steps).
func stepsHeader(steps []platform.Step) string {
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

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// checkPayload refuses a payload that is not JSON, as Lambda does (400
// InvalidRequestContentException "Could not parse request body into json: …"; the detail after
// the prefix is Go's, where Lambda's is its Java parser's).
func checkPayload(payload []byte) error {
	// Syntax only, without building a parse tree (the payload is passed on as it came): a number
	// beyond float64's range (1e400) is valid JSON, as Lambda's parser takes it.
	if json.Valid(payload) {
		return nil
	}
	var v any
	if err := json.Unmarshal(payload, &v); err != nil { // for the parser's message
		return &platform.APIError{Status: http.StatusBadRequest, Code: "InvalidRequestContentException",
			Msg: "Could not parse request body into json: Could not parse payload into json: " + err.Error()}
	}
	return nil
}

// maxClientContext is Lambda's limit for X-Amz-Client-Context (base64, as sent).
const maxClientContext = 3583

// decodeClientContext decodes X-Amz-Client-Context: base64 of a JSON object, at most 3,583
// bytes as sent. Anything else is Lambda's 400 InvalidRequestContentException "Client context
// must be a valid Base64-encoded JSON object." ("" when the header is absent).
func decodeClientContext(h string) (string, error) {
	if h == "" {
		return "", nil
	}
	invalid := &platform.APIError{Status: http.StatusBadRequest, Code: "InvalidRequestContentException",
		Msg: "Client context must be a valid Base64-encoded JSON object."}
	if len(h) > maxClientContext {
		return "", &platform.APIError{Status: http.StatusBadRequest, Code: "InvalidRequestContentException",
			Msg: "Client context must be a valid Base64-encoded JSON object of at most 3583 bytes."}
	}
	b, err := base64.StdEncoding.DecodeString(h)
	if err != nil {
		return "", invalid
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return "", invalid
	}
	return string(bytes.TrimSpace(b)), nil
}
