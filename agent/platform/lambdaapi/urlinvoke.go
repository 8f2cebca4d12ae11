package lambdaapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/faascope/faascope/agent/platform"
)

// Function URLs served: a request to http://<url-id>.lambda-url.<region>.localhost:<port>/…
// (the API's listener; a *.localhost name is the loopback address, RFC 6761) invokes the
// function, version or alias the URL belongs to with the request as AWS's payload format 2.0
// event, and answers from what the function returns, as AWS documents both ("Invoking Lambda
// function URLs": request payload and response payload formats). A URL whose AuthType is
// AWS_IAM needs the platform's API token, as every API call does (the platform's stand-in for
// IAM); AuthType NONE needs nothing. InvokeMode RESPONSE_STREAM is answered buffered.

var urlHostRE = regexp.MustCompile(`^([0-9a-f]{32})\.lambda-url\.([a-z0-9-]+)\.localhost\.?$`)

// functionURLHost says whether a request's Host is a function URL's, and whose.
func functionURLHost(host string) (region, id string, ok bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	m := urlHostRE.FindStringSubmatch(strings.ToLower(host))
	if m == nil {
		return "", "", false
	}
	return m[2], m[1], true
}

// urlError answers as a function URL does: a status and {"Message": …}.
func urlError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"Message": msg})
}

func (a *api) serveFunctionURL(w http.ResponseWriter, r *http.Request, region, id, token string) {
	ref, cfg, err := a.p.FunctionURLTarget(region, id)
	if err != nil {
		urlError(w, http.StatusForbidden, "Forbidden") // AWS's answer for a URL that does not exist
		return
	}
	if cfg.AuthType == "AWS_IAM" && token != "" && !authorized(r, token) {
		urlError(w, http.StatusForbidden, "Forbidden")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(platform.MaxPayload)+1))
	if err != nil || len(body) > platform.MaxPayload {
		urlError(w, http.StatusRequestEntityTooLarge, "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
		return
	}
	requestID := platform.NewRequestID()
	event, _ := json.Marshal(urlEvent(r, body, id, requestID, time.Now()))
	res, _, err := a.p.Invoke(r.Context(), platform.InvokeRequest{Name: ref.Name, Region: ref.Region, Qualifier: ref.Qualifier,
		Payload: event, RequestID: requestID, NoReport: true})
	w.Header().Set("X-Amzn-RequestId", requestID)
	switch {
	case err != nil:
		ae := platform.AWSError(err)
		urlError(w, ae.Status, ae.Msg)
	case res.FuncError != "":
		// AWS answers a function error with 502 and this body.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "Internal Server Error")
	default:
		writeURLResponse(w, res.Payload)
	}
}

// isTextType says whether AWS passes a body of this Content-Type as text (else base64).
func isTextType(ct string) bool {
	ct = strings.ToLower(ct)
	return ct == "" || strings.HasPrefix(ct, "text/") || strings.Contains(ct, "json") || strings.Contains(ct, "xml") ||
		strings.Contains(ct, "javascript") || strings.Contains(ct, "x-www-form-urlencoded")
}

// urlEvent is the request as payload format 2.0 (AWS: "Request payload format").
func urlEvent(r *http.Request, body []byte, id, requestID string, now time.Time) map[string]any {
	headers := map[string]string{}
	var cookies []string
	for k, v := range r.Header {
		k = strings.ToLower(k)
		if k == "cookie" {
			for _, c := range v {
				for _, part := range strings.Split(c, ";") {
					if part = strings.TrimSpace(part); part != "" {
						cookies = append(cookies, part)
					}
				}
			}
			continue
		}
		headers[k] = strings.Join(v, ",")
	}
	headers["host"] = r.Host
	path := r.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	sourceIP, _, _ := net.SplitHostPort(r.RemoteAddr)
	ev := map[string]any{
		"version":        "2.0",
		"routeKey":       "$default",
		"rawPath":        path,
		"rawQueryString": r.URL.RawQuery,
		"headers":        headers,
		"requestContext": map[string]any{
			"accountId":    "anonymous",
			"apiId":        id,
			"domainName":   host,
			"domainPrefix": id,
			"http": map[string]string{"method": r.Method, "path": path, "protocol": r.Proto,
				"sourceIp": sourceIP, "userAgent": r.UserAgent()},
			"requestId": requestID,
			"routeKey":  "$default",
			"stage":     "$default",
			"time":      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			"timeEpoch": now.UnixMilli(),
		},
		"isBase64Encoded": false,
	}
	if len(cookies) > 0 {
		ev["cookies"] = cookies
	}
	if q := r.URL.Query(); len(q) > 0 {
		params := map[string]string{}
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			params[k] = strings.Join(q[k], ",")
		}
		ev["queryStringParameters"] = params
	}
	if len(body) > 0 {
		if isTextType(r.Header.Get("Content-Type")) {
			ev["body"] = string(body)
		} else {
			ev["body"] = base64.StdEncoding.EncodeToString(body)
			ev["isBase64Encoded"] = true
		}
	}
	return ev
}

// writeURLResponse answers from the function's result (AWS: "Response payload format"): a JSON
// object with statusCode is the response's status, headers, cookies and body; anything else is
// the body of a 200 application/json response, as it is.
func writeURLResponse(w http.ResponseWriter, payload []byte) {
	var out struct {
		StatusCode      *int              `json:"statusCode"`
		Headers         map[string]string `json:"headers"`
		Cookies         []string          `json:"cookies"`
		Body            *string           `json:"body"`
		IsBase64Encoded bool              `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(payload, &out); err != nil || out.StatusCode == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(payload)
		return
	}
	for k, v := range out.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range out.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	var body []byte
	if out.Body != nil {
		body = []byte(*out.Body)
		if out.IsBase64Encoded {
			b, err := base64.StdEncoding.DecodeString(*out.Body)
			if err != nil {
				urlError(w, http.StatusBadGateway, "Internal Server Error")
				return
			}
			body = b
		}
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	status := *out.StatusCode
	if status < 100 || status > 599 {
		urlError(w, http.StatusBadGateway, "Internal Server Error")
		return
	}
	w.WriteHeader(status)
	w.Write(body)
}
