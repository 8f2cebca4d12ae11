package platform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
)

// What Invoke checks of a request before it runs anything, with Lambda's answers.

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
		return &apiError{http.StatusBadRequest, "InvalidRequestContentException",
			"Could not parse request body into json: Could not parse payload into json: " + err.Error(), ""}
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
	invalid := &apiError{http.StatusBadRequest, "InvalidRequestContentException",
		"Client context must be a valid Base64-encoded JSON object.", ""}
	if len(h) > maxClientContext {
		return "", &apiError{http.StatusBadRequest, "InvalidRequestContentException",
			"Client context must be a valid Base64-encoded JSON object of at most 3583 bytes.", ""}
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

// CheckInvoke is a DryRun: what Invoke would refuse (a missing function, version or alias, a
// function that is not Active), without running anything.
func (p *Platform) CheckInvoke(req InvokeRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _, err := p.invocationTarget(req)
	return err
}
