package platform

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// urlRuntime answers each invocation with its event as it came, or with $FIXED, or fails when
// $FAIL is set.
const urlRuntime = `#!/bin/sh
api="http://$AWS_LAMBDA_RUNTIME_API/2018-06-01/runtime/invocation"
while true; do
  curl -sS -D /tmp/h -o /tmp/e "$api/next" || exit 1
  id=$(grep -i '^Lambda-Runtime-Aws-Request-Id:' /tmp/h | tr -d '\r' | cut -d' ' -f2)
  if [ -n "$FAIL" ]; then
    curl -sS -X POST -d '{"errorMessage":"no","errorType":"E"}' "$api/$id/error" >/dev/null
    continue
  fi
  if [ -n "$FIXED" ]; then printf '%s' "$FIXED" > /tmp/e; fi
  curl -sS -X POST --data-binary @/tmp/e "$api/$id/response" >/dev/null
done
`

// A function URL is served (lambdaapi/urlinvoke.go): the request reaches the function as AWS's
// payload format 2.0 event, and the function's answer becomes the HTTP response as AWS's
// response format says; a function error is 502; an AWS_IAM URL needs the API token, a NONE one
// does not.
func TestFunctionURLIsServed(t *testing.T) {
	needCurl(t)
	tp := startPlatform(t, Config{Token: "secret"})
	auth := map[string]string{"Authorization": "Bearer secret"}
	create := func(name string, env map[string]string, authType string) string {
		req := map[string]any{"FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::123456789012:role/r", "Handler": "h",
			"Code":        map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"bootstrap": []byte(urlRuntime)}))},
			"Environment": map[string]any{"Variables": env}}
		if resp, body := tp.call("POST", fnPath, req, auth); resp.StatusCode != 201 {
			t.Fatalf("create %s: %d %s", name, resp.StatusCode, body)
		}
		waitReady(t, tp.Platform, name)
		resp, body := tp.call("POST", "/2021-10-31/functions/"+name+"/url", map[string]any{"AuthType": authType}, auth)
		if resp.StatusCode != 201 {
			t.Fatalf("url of %s: %d %s", name, resp.StatusCode, body)
		}
		return decode[map[string]string](t, body)["FunctionUrl"]
	}
	// send calls the URL on the platform's listener with the URL's Host (no resolver needed).
	send := func(fnURL, method, path, body string, headers map[string]string) (*http.Response, string) {
		u, _ := url.Parse(fnURL)
		req, _ := http.NewRequest(method, tp.url+path, strings.NewReader(body))
		req.Host = u.Host
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	echo := create("echo", nil, "NONE")
	if !strings.HasSuffix(echo, ".lambda-url.us-east-1.localhost"+tp.url[strings.LastIndex(tp.url, ":"):]+"/") {
		t.Fatalf("FunctionUrl %s is not served where the API is (%s)", echo, tp.url)
	}
	resp, ev := send(echo, "POST", "/a/b?x=1&x=2&y=3", `{"k":"v"}`, map[string]string{"Content-Type": "application/json", "Cookie": "s=1; t=2", "X-Custom": "c"})
	for _, want := range []string{`"version":"2.0"`, `"rawPath":"/a/b"`, `"rawQueryString":"x=1\u0026x=2\u0026y=3"`,
		`"queryStringParameters":{"x":"1,2","y":"3"}`, `"cookies":["s=1","t=2"]`, `"x-custom":"c"`, `"method":"POST"`,
		`"body":"{\"k\":\"v\"}"`, `"isBase64Encoded":false`, `"routeKey":"$default"`} {
		if !strings.Contains(ev, want) {
			t.Errorf("event lacks %s: %s", want, ev)
		}
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("an answer without statusCode: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	_, ev = send(echo, "PUT", "/", "\x00\x01", map[string]string{"Content-Type": "application/octet-stream"})
	if !strings.Contains(ev, `"body":"AAE="`) || !strings.Contains(ev, `"isBase64Encoded":true`) {
		t.Fatalf("a binary body is base64: %s", ev)
	}

	fixed := create("fixed", map[string]string{"FIXED": `{"statusCode":201,"headers":{"x-a":"b"},"cookies":["c=1"],"body":"aGk=","isBase64Encoded":true}`}, "AWS_IAM")
	resp, body := send(fixed, "GET", "/", "", auth)
	if resp.StatusCode != 201 || resp.Header.Get("X-A") != "b" || resp.Header.Get("Set-Cookie") != "c=1" || body != "hi" {
		t.Fatalf("a statusCode answer: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	if resp, _ = send(fixed, "GET", "/", "", nil); resp.StatusCode != 403 {
		t.Fatalf("an AWS_IAM URL without the token: %d", resp.StatusCode)
	}

	failing := create("failing", map[string]string{"FAIL": "1"}, "NONE")
	if resp, body = send(failing, "GET", "/", "", nil); resp.StatusCode != 502 || body != "Internal Server Error" {
		t.Fatalf("a function error: %d %q", resp.StatusCode, body)
	}
	if resp, _ = send("http://0123456789abcdef0123456789abcdef.lambda-url.us-east-1.localhost/", "GET", "/", "", nil); resp.StatusCode != 403 {
		t.Fatalf("a URL that does not exist: %d", resp.StatusCode)
	}
	// The API itself still needs the token.
	if resp, _ := tp.call("GET", fnPath, nil, nil); resp.StatusCode != 403 {
		t.Fatalf("the API without the token: %d", resp.StatusCode)
	}
}
