package platform

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The control plane's faithfulness (issue #15): routing, names, regions, versions and aliases,
// states, create checks and Invoke's checks, each driven through the HTTP API as boto3 drives it.

const fnPath = "/2015-03-31/functions/"

// signedFor is the Authorization header of a SigV4 request signed for region.
func signedFor(region string) map[string]string {
	return map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/" + region +
		"/lambda/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"}
}

// wantError checks an AWS error answer: status and X-Amzn-ErrorType, and a message containing msg.
func wantError(t *testing.T, what string, resp *http.Response, body []byte, status int, code, msg string) {
	t.Helper()
	var e struct{ Message string }
	json.Unmarshal(body, &e)
	if resp.StatusCode != status || resp.Header.Get("X-Amzn-ErrorType") != code || !strings.Contains(e.Message, msg) {
		t.Errorf("%s: got %d %s %s, want %d %s %q", what, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body, status, code, msg)
	}
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

// probeRuntime is a custom runtime that answers each invocation with what Lambda told it: its
// region and version (environment), the invoked ARN (Runtime API header), and $MARKER; it prints
// one "invoked" line per invocation, and fails the invocation when $FAIL is set.
const probeRuntime = `#!/bin/sh
api="http://$AWS_LAMBDA_RUNTIME_API/2018-06-01/runtime/invocation"
while true; do
  curl -sS -D /tmp/h -o /tmp/e "$api/next" || exit 1
  id=$(grep -i '^Lambda-Runtime-Aws-Request-Id:' /tmp/h | tr -d '\r' | cut -d' ' -f2)
  arn=$(grep -i '^Lambda-Runtime-Invoked-Function-Arn:' /tmp/h | tr -d '\r' | cut -d' ' -f2)
  echo "invoked $id"
  if [ -n "$FAIL" ]; then
    curl -sS -o /dev/null -X POST --data-binary '{"errorMessage":"failing","errorType":"Probe"}' "$api/$id/error"
    continue
  fi
  printf '{"region":"%s","default_region":"%s","version":"%s","arn":"%s","marker":"%s","request_id":"%s"}' \
    "$AWS_REGION" "$AWS_DEFAULT_REGION" "$AWS_LAMBDA_FUNCTION_VERSION" "$arn" "$MARKER" "$id" > /tmp/r
  curl -sS -o /dev/null -X POST --data-binary @/tmp/r "$api/$id/response"
done
`

type probeReply struct {
	Region, DefaultRegion, Version, Arn, Marker, RequestID string
}

func (r *probeReply) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = probeReply{m["region"], m["default_region"], m["version"], m["arn"], m["marker"], m["request_id"]}
	return nil
}

func needCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("needs curl in the sandbox's /usr")
	}
}

func probeZip() string {
	return base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"bootstrap": []byte(probeRuntime)}))
}

// createProbe creates a probe function (headers: the region to sign for) and waits until Active.
func (tp *testPlatform) createProbe(name string, env map[string]string, headers map[string]string) FunctionConfiguration {
	tp.t.Helper()
	req := map[string]any{"FunctionName": name, "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
		"Code": map[string]string{"ZipFile": probeZip()}, "Environment": map[string]any{"Variables": env}}
	resp, body := tp.call("POST", fnPath, req, headers)
	if resp.StatusCode != http.StatusCreated {
		tp.t.Fatalf("create %s: %d %s", name, resp.StatusCode, body)
	}
	cfg := decode[FunctionConfiguration](tp.t, body)
	tp.waitHTTP(name, headers)
	return cfg
}

// waitHTTP polls GetFunctionConfiguration until Active and Successful, as boto3's waiters do.
func (tp *testPlatform) waitHTTP(name string, headers map[string]string) {
	tp.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, body := tp.call("GET", fnPath+url.PathEscape(name)+"/configuration", nil, headers)
		c := decode[FunctionConfiguration](tp.t, body)
		if c.State == "Active" && c.LastUpdateStatus == "Successful" {
			return
		}
		if time.Now().After(deadline) {
			tp.t.Fatalf("%s not ready: %s", name, body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// invokeProbe invokes name (a name, ARN or name:qualifier; query is added to the path).
func (tp *testPlatform) invokeProbe(name, query string, headers map[string]string) (*http.Response, probeReply, []byte) {
	tp.t.Helper()
	resp, body := tp.call("POST", fnPath+url.PathEscape(name)+"/invocations"+query, map[string]any{}, headers)
	var r probeReply
	if resp.StatusCode == 200 && resp.Header.Get("X-Amz-Function-Error") == "" {
		if err := json.Unmarshal(body, &r); err != nil {
			tp.t.Fatalf("probe reply: %v: %s", err, body)
		}
	}
	return resp, r, body
}

func TestUnimplementedOperationsAreRefusedAsUnknown(t *testing.T) {
	tp := startPlatform(t, Config{})
	for _, c := range []struct{ method, path string }{
		{"POST", "/2021-11-15/functions/fn/response-streaming-invocations"}, // InvokeWithResponseStream
		{"PATCH", fnPath + "fn"},
	} {
		resp, body := tp.call(c.method, c.path, map[string]any{"StatementId": "s", "Action": "lambda:InvokeFunction"}, nil)
		wantError(t, c.method+" "+c.path, resp, body, http.StatusNotFound, "UnknownOperationException", "")
	}
	// AddPermission and GetPolicy were taken for CreateFunction and ListFunctions; now they are
	// themselves (policy.go) and answer for the missing function.
	resp, body := tp.call("POST", fnPath+"fn/policy", map[string]any{"StatementId": "s", "Action": "lambda:InvokeFunction", "Principal": "*"}, nil)
	wantError(t, "AddPermission of a missing function", resp, body, http.StatusNotFound, "ResourceNotFoundException", "Function not found")
	if list, _ := tp.ListFunctions(defaultRegion, "", 50); len(list) != 0 {
		t.Fatalf("an unknown operation created a function: %+v", list)
	}
	// The version and alias operations of a missing function answer that it is missing (they
	// returned 200 {}).
	for _, path := range []string{fnPath + "gone/versions", fnPath + "gone/aliases", fnPath + "gone/aliases/live"} {
		resp, body := tp.call("GET", path, nil, nil)
		wantError(t, "GET "+path, resp, body, http.StatusNotFound, "ResourceNotFoundException", "Function not found")
	}
	resp, body = tp.call("POST", fnPath+"gone/versions", map[string]any{}, nil)
	wantError(t, "PublishVersion of a missing function", resp, body, http.StatusNotFound, "ResourceNotFoundException", "Function not found: arn:aws:lambda:us-east-1:000000000000:function:gone")
	// Layers are honoured, never dropped: one that does not exist is refused (layers_test.go
	// mounts real ones).
	resp, body = tp.call("POST", fnPath, map[string]any{"FunctionName": "lay", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r",
		"Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)},
		"Layers": []string{"arn:aws:lambda:us-east-1:000000000000:layer:l:1"}}, nil)
	wantError(t, "Layers", resp, body, http.StatusBadRequest, "InvalidParameterValueException", "does not exist")
}

func TestFunctionNamesARNsAndQualifiers(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("nm", nil)
	arn := "arn:aws:lambda:us-east-1:000000000000:function:nm"
	for _, name := range []string{"nm", arn, "000000000000:function:nm", "nm:$LATEST", arn + ":$LATEST"} {
		resp, body := tp.call("GET", fnPath+url.PathEscape(name)+"/configuration", nil, nil)
		if resp.StatusCode != 200 || decode[FunctionConfiguration](t, body).FunctionName != "nm" {
			t.Errorf("GetFunctionConfiguration(%s): %d %s", name, resp.StatusCode, body)
		}
	}
	if resp, _, body := tp.invoke(url.PathEscape(arn), `{"workload":{"kind":"noop"}}`); resp.StatusCode != 200 {
		t.Errorf("invoke by ARN: %d %s", resp.StatusCode, body)
	}
	resp, body := tp.call("GET", fnPath+url.PathEscape("nm:1")+"/configuration?Qualifier=2", nil, nil)
	wantError(t, "two qualifiers", resp, body, 400, "InvalidParameterValueException", "The derived qualifier from the function name does not match the specified qualifier.")
	resp, body = tp.call("GET", fnPath+"nm/configuration?Qualifier=7", nil, nil)
	wantError(t, "unknown version", resp, body, 404, "ResourceNotFoundException", "Function not found: "+arn+":7")
	resp, body = tp.call("GET", fnPath+url.PathEscape("nm:nosuchalias"), nil, nil)
	wantError(t, "unknown alias", resp, body, 404, "ResourceNotFoundException", "Function not found: "+arn+":nosuchalias")
	resp, _, body = tp.invokeProbe("nm", "?Qualifier=3", nil)
	wantError(t, "invoke of an unknown version", resp, body, 404, "ResourceNotFoundException", "Function not found")
	resp, body = tp.call("GET", fnPath+url.PathEscape("arn:aws:lambda:eu-west-1:000000000000:function:nm"), nil, nil)
	wantError(t, "another region's ARN", resp, body, 404, "ResourceNotFoundException", "Functions from 'eu-west-1' are not reachable in this region ('us-east-1')")
	resp, body = tp.call("GET", fnPath+url.PathEscape("arn:aws:lambda:us-east-1:123456789012:function:nm"), nil, nil)
	wantError(t, "another account's ARN", resp, body, 403, "AccessDeniedException", "")
	resp, body = tp.call("GET", fnPath+url.PathEscape("a:b:c:d"), nil, nil)
	wantError(t, "malformed name", resp, body, 400, "ValidationException", "functionName")
	// CreateFunction takes an ARN as FunctionName too.
	resp, body = tp.call("POST", fnPath, map[string]any{"FunctionName": "arn:aws:lambda:us-east-1:000000000000:function:byarn",
		"Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}, nil)
	if resp.StatusCode != 201 || decode[FunctionConfiguration](t, body).FunctionName != "byarn" {
		t.Errorf("create by ARN: %d %s", resp.StatusCode, body)
	}
}

func TestRegionComesFromTheCredentialScope(t *testing.T) {
	needCurl(t)
	tp := startPlatform(t, Config{})
	eu := signedFor("eu-west-1")
	cfg := tp.createProbe("regional", nil, eu)
	if cfg.FunctionArn != "arn:aws:lambda:eu-west-1:000000000000:function:regional" {
		t.Fatalf("FunctionArn %s", cfg.FunctionArn)
	}
	_, r, body := tp.invokeProbe("regional", "", eu)
	if r.Region != "eu-west-1" || r.DefaultRegion != "eu-west-1" || r.Arn != cfg.FunctionArn {
		t.Fatalf("inside the function: %s", body)
	}
	// Regions are namespaces, as on Lambda: us-east-1 (unsigned, or signed for it) does not see it.
	for _, h := range []map[string]string{nil, signedFor("us-east-1")} {
		resp, body := tp.call("GET", fnPath+"regional", nil, h)
		wantError(t, "from us-east-1", resp, body, 404, "ResourceNotFoundException", "function:regional")
	}
	resp, body := tp.call("GET", fnPath, nil, nil)
	if strings.Contains(string(body), "regional") || resp.StatusCode != 200 {
		t.Fatalf("us-east-1 lists eu-west-1's function: %s", body)
	}
	// The same name in another region is another function.
	tp.createProbe("regional", nil, nil)
	if _, r, _ := tp.invokeProbe("regional", "", nil); r.Region != "us-east-1" {
		t.Fatalf("us-east-1's function runs in %q", r.Region)
	}
	// Both survive a restart (the us-east-1 one in the directory layout of old data dirs).
	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	for _, region := range []string{"eu-west-1", "us-east-1"} {
		if _, err := p2.GetFunction(funcRef{fnKey: fnKey{region, "regional"}}); err != nil {
			t.Errorf("%s: %v", region, err)
		}
	}
	if _, err := os.Stat(filepath.Join(tp.cfg.DataDir, "functions", "regional", "function.json")); err != nil {
		t.Errorf("us-east-1 functions keep their old place: %v", err)
	}
}

func TestVersionsAndAliases(t *testing.T) {
	needCurl(t)
	tp := startPlatform(t, Config{})
	tp.createProbe("ver", map[string]string{"MARKER": "one"}, nil)
	publish := func(body map[string]any) (*http.Response, []byte) {
		return tp.call("POST", fnPath+"ver/versions", body, nil)
	}
	resp, body := publish(map[string]any{})
	v1 := decode[FunctionConfiguration](t, body)
	if resp.StatusCode != 201 || v1.Version != "1" || v1.FunctionArn != "arn:aws:lambda:us-east-1:000000000000:function:ver:1" {
		t.Fatalf("PublishVersion: %d %s", resp.StatusCode, body)
	}
	if _, body := publish(map[string]any{}); decode[FunctionConfiguration](t, body).Version != "1" {
		t.Fatalf("publishing an unchanged $LATEST makes no new version: %s", body)
	}
	resp, body = tp.call("PUT", fnPath+"ver/configuration", map[string]any{"Environment": map[string]any{"Variables": map[string]string{"MARKER": "two"}}}, nil)
	if c := decode[FunctionConfiguration](t, body); resp.StatusCode != 200 || c.LastUpdateStatus != "InProgress" {
		t.Fatalf("UpdateFunctionConfiguration: %d %s", resp.StatusCode, body)
	}
	tp.waitHTTP("ver", nil)
	resp, body = publish(map[string]any{"CodeSha256": "bm90IHRoZSBzaGE="})
	wantError(t, "PublishVersion with another CodeSha256", resp, body, 400, "InvalidParameterValueException", "is different from current CodeSHA256 in $LATEST")
	resp, body = publish(map[string]any{"RevisionId": "not-it"})
	wantError(t, "PublishVersion with another RevisionId", resp, body, 412, "PreconditionFailedException", "Revision Id")
	if _, body := publish(map[string]any{"Description": "second"}); decode[FunctionConfiguration](t, body).Version != "2" {
		t.Fatalf("second version: %s", body)
	}
	// ListVersionsByFunction: $LATEST first, paged.
	_, body = tp.call("GET", fnPath+"ver/versions", nil, nil)
	type versions struct {
		Versions   []FunctionConfiguration
		NextMarker string
	}
	if vs := decode[versions](t, body).Versions; len(vs) != 3 || vs[0].Version != "$LATEST" || vs[2].Description != "second" {
		t.Fatalf("ListVersionsByFunction: %s", body)
	}
	_, body = tp.call("GET", fnPath+"ver/versions?MaxItems=2", nil, nil)
	page := decode[versions](t, body)
	_, body = tp.call("GET", fnPath+"ver/versions?MaxItems=2&Marker="+page.NextMarker, nil, nil)
	if rest := decode[versions](t, body); len(page.Versions) != 2 || len(rest.Versions) != 1 || rest.Versions[0].Version != "2" || rest.NextMarker != "" {
		t.Fatalf("paging: %+v then %s", page, body)
	}

	// Each version runs its own code and configuration, on its own instances.
	_, r1, _ := tp.invokeProbe("ver:1", "", nil)
	resp, r2, _ := tp.invokeProbe("ver", "?Qualifier=2", nil)
	respL, rl, _ := tp.invokeProbe("ver", "", nil)
	if r1.Marker != "one" || r1.Version != "1" || r2.Marker != "two" || r2.Version != "2" || rl.Version != "$LATEST" ||
		resp.Header.Get("X-Amz-Executed-Version") != "2" || respL.Header.Get("X-Amz-Executed-Version") != "$LATEST" {
		t.Fatalf("version 1 %+v, version 2 %+v, $LATEST %+v", r1, r2, rl)
	}
	if r1.Arn != "arn:aws:lambda:us-east-1:000000000000:function:ver:1" || rl.Arn != "arn:aws:lambda:us-east-1:000000000000:function:ver" {
		t.Fatalf("invoked ARNs: %s, %s", r1.Arn, rl.Arn)
	}
	if n := len(tp.Instances()); n != 3 {
		t.Fatalf("instances: %d, want one per version", n)
	}

	// Aliases.
	alias := func(method, path string, body any) (*http.Response, []byte) {
		return tp.call(method, fnPath+"ver/aliases"+path, body, nil)
	}
	resp, body = alias("POST", "", map[string]any{"Name": "live", "FunctionVersion": "1"})
	live := decode[Alias](t, body)
	if resp.StatusCode != 201 || live.AliasArn != "arn:aws:lambda:us-east-1:000000000000:function:ver:live" || live.FunctionVersion != "1" {
		t.Fatalf("CreateAlias: %d %s", resp.StatusCode, body)
	}
	resp, body = alias("POST", "", map[string]any{"Name": "live", "FunctionVersion": "1"})
	wantError(t, "CreateAlias twice", resp, body, 409, "ResourceConflictException", "Alias already exists")
	resp, body = alias("POST", "", map[string]any{"Name": "w", "FunctionVersion": "1",
		"RoutingConfig": map[string]any{"AdditionalVersionWeights": map[string]float64{"2": 1.5}}})
	wantError(t, "a weight above 1", resp, body, 400, "ValidationException", "Value '{2=1.5}' at 'routingConfig.additionalVersionWeights'")
	resp, body = alias("POST", "", map[string]any{"Name": "bad", "FunctionVersion": "9"})
	wantError(t, "alias to a missing version", resp, body, 404, "ResourceNotFoundException", "")
	resp, body = alias("GET", "/nope", nil)
	wantError(t, "GetAlias", resp, body, 404, "ResourceNotFoundException", "Cannot find alias arn: arn:aws:lambda:us-east-1:000000000000:function:ver:nope")
	resp, r, _ := tp.invokeProbe("ver:live", "", nil)
	if r.Marker != "one" || resp.Header.Get("X-Amz-Executed-Version") != "1" || r.Arn != live.AliasArn {
		t.Fatalf("invoke by alias: %+v %s", r, resp.Header.Get("X-Amz-Executed-Version"))
	}
	_, body = tp.call("GET", fnPath+"ver?Qualifier=live", nil, nil)
	if c := decode[struct{ Configuration FunctionConfiguration }](t, body).Configuration; c.Version != "1" || c.FunctionArn != live.AliasArn {
		t.Fatalf("GetFunction by alias: %s", body)
	}
	resp, body = tp.call("DELETE", fnPath+"ver?Qualifier=1", nil, nil)
	wantError(t, "deleting an aliased version", resp, body, 409, "ResourceConflictException", "Unable to delete version because the following aliases reference it: ['live']")
	resp, body = alias("PUT", "/live", map[string]any{"FunctionVersion": "2", "RevisionId": "stale"})
	wantError(t, "UpdateAlias with a stale RevisionId", resp, body, 412, "PreconditionFailedException", "")
	resp, body = alias("PUT", "/live", map[string]any{"FunctionVersion": "2", "Description": "now two"})
	if a := decode[Alias](t, body); resp.StatusCode != 200 || a.FunctionVersion != "2" || a.Description != "now two" {
		t.Fatalf("UpdateAlias: %d %s", resp.StatusCode, body)
	}
	if _, r, _ := tp.invokeProbe("ver:live", "", nil); r.Marker != "two" {
		t.Fatalf("alias moved to 2, invocation ran %+v", r)
	}
	_, body = alias("GET", "", nil)
	if as := decode[struct{ Aliases []Alias }](t, body).Aliases; len(as) != 1 || as[0].Name != "live" {
		t.Fatalf("ListAliases: %s", body)
	}
	resp, body = tp.call("DELETE", fnPath+"ver?Qualifier=$LATEST", nil, nil)
	wantError(t, "deleting $LATEST", resp, body, 400, "InvalidParameterValueException", "$LATEST version cannot be deleted")
	if resp, body := tp.call("DELETE", fnPath+"ver?Qualifier=1", nil, nil); resp.StatusCode != 204 {
		t.Fatalf("DeleteFunction of version 1: %d %s", resp.StatusCode, body)
	}
	resp, _, body = tp.invokeProbe("ver:1", "", nil)
	wantError(t, "invoking a deleted version", resp, body, 404, "ResourceNotFoundException", "function:ver:1")

	// Versions and aliases survive a restart; numbers are not reused.
	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if fn, err := p2.GetFunction(funcRef{key("ver"), "live"}); err != nil || fn.Config.Version != "2" {
		t.Fatalf("after a restart: %+v %v", fn.Config, err)
	}
	if v, err := p2.PublishVersion(key("ver"), PublishInput{}); err != nil || v.Version != "2" {
		t.Fatalf("after a restart, an unchanged $LATEST publishes nothing: %+v %v", v, err)
	}
	if err := p2.DeleteFunction(ref("ver")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tp.cfg.DataDir, "functions", "ver")); !os.IsNotExist(err) {
		t.Fatalf("DeleteFunction left the versions' files: %v", err)
	}
}

func TestPublishOnCreateAndUpdateCode(t *testing.T) {
	tp := startPlatform(t, Config{})
	resp, body := tp.call("POST", fnPath, map[string]any{"FunctionName": "pub", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r",
		"Handler": "h", "Publish": true, "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}, nil)
	if c := decode[FunctionConfiguration](t, body); resp.StatusCode != 201 || c.Version != "1" {
		t.Fatalf("CreateFunction with Publish: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "pub")
	if fn, err := tp.GetFunction(funcRef{key("pub"), "1"}); err != nil || fn.Config.State != "Active" {
		t.Fatalf("version 1 once the function is Active: %+v %v", fn.Config, err)
	}
	pkg := zipOf(nil, map[string][]byte{"bootstrap": []byte("#!/bin/sh\nexit 1\n")})
	resp, body = tp.call("PUT", fnPath+"pub/code", map[string]any{"ZipFile": base64.StdEncoding.EncodeToString(pkg), "Publish": true}, nil)
	if c := decode[FunctionConfiguration](t, body); resp.StatusCode != 200 || c.Version != "2" || c.CodeSha256 != shaOf(pkg) {
		t.Fatalf("UpdateFunctionCode with Publish: %d %s", resp.StatusCode, body)
	}
	waitReady(t, tp.Platform, "pub")
	// Version 1 keeps the first package.
	if _, r, body := tp.invoke("pub:1", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("version 1 runs its own package: %s", body)
	}
}

// holdPreparation keeps functions Pending or InProgress until the returned func is called.
func holdPreparation(t *testing.T) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	beforePrepare = func(fnKey) { <-gate }
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(func() { release(); beforePrepare = func(fnKey) {} })
	return release
}

func TestStatesArePendingThenActiveAndInProgressThenSuccessful(t *testing.T) {
	tp := startPlatform(t, Config{})
	release := holdPreparation(t)
	resp, body := tp.call("POST", fnPath, map[string]any{"FunctionName": "st", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r",
		"Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}, nil)
	c := decode[FunctionConfiguration](t, body)
	if resp.StatusCode != 201 || c.State != "Pending" || c.StateReasonCode != "Creating" {
		t.Fatalf("CreateFunction: %s", body)
	}
	resp, _, body = tp.invoke("st", `{}`)
	wantError(t, "invoke while Pending", resp, body, 409, "ResourceConflictException",
		"The operation cannot be performed at this time. The function is currently in the following state: Pending")
	resp, body = tp.call("PUT", fnPath+"st/configuration", map[string]any{"Timeout": 5}, nil)
	wantError(t, "update while Pending", resp, body, 409, "ResourceConflictException", "Pending")
	release()
	waitReady(t, tp.Platform, "st")
	if _, r, body := tp.invoke("st", `{"workload":{"kind":"noop"}}`); !r.OK {
		t.Fatalf("invoke once Active: %s", body)
	}

	release = holdPreparation(t)
	resp, body = tp.call("PUT", fnPath+"st/configuration", map[string]any{"Timeout": 5}, nil)
	if c := decode[FunctionConfiguration](t, body); c.State != "Active" || c.LastUpdateStatus != "InProgress" || c.LastUpdateStatusReasonCode != "Creating" {
		t.Fatalf("UpdateFunctionConfiguration: %s", body)
	}
	resp, body = tp.call("PUT", fnPath+"st/code", map[string]any{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}, nil)
	wantError(t, "update while InProgress", resp, body, 409, "ResourceConflictException",
		"The operation cannot be performed at this time. An update is in progress for resource: arn:aws:lambda:us-east-1:000000000000:function:st")
	resp, body = tp.call("POST", fnPath+"st/versions", map[string]any{}, nil)
	wantError(t, "publish while InProgress", resp, body, 409, "ResourceConflictException", "An update is in progress")
	release()
	waitReady(t, tp.Platform, "st")
}

func TestAPackageThatCannotBeUnpackedFailsTheFunction(t *testing.T) {
	tp := startPlatform(t, Config{})
	// A zip checkPackage accepts but a cold start cannot unpack (an entry escaping the package).
	resp, body := tp.call("POST", fnPath, map[string]any{"FunctionName": "esc", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r",
		"Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(zipOf(nil, map[string][]byte{"../x": []byte("x")}))}}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, body)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		fn, _ := tp.GetFunction(ref("esc"))
		if fn.Config.State == "Failed" && fn.Config.StateReasonCode == "InvalidZipFileException" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state: %+v", fn.Config)
		}
	}
	resp, _, body = tp.invoke("esc", `{}`)
	wantError(t, "invoke of a Failed function", resp, body, 409, "ResourceConflictException", "Failed")
}

// zeroedCRCZip is a package whose one file's data was corrupted and whose CRC fields read 0:
// archive/zip skips the check then, so it used to pass checkPackage.
func zeroedCRCZip() []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	data := []byte("#!/bin/sh\necho hello\n")
	h := &zip.FileHeader{Name: "bootstrap", Method: zip.Store,
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))} // CRC32 left 0
	h.SetMode(0o755)
	w, _ := zw.CreateRaw(h)
	w.Write(data)
	zw.Close()
	b := buf.Bytes()
	i := bytes.Index(b, data)
	b[i+3] ^= 0xff // the data, after the fact
	return b
}

func TestCorruptZipIsRefusedAtCreateAndUpdate(t *testing.T) {
	tp := startPlatform(t, Config{})
	bad := base64.StdEncoding.EncodeToString(zeroedCRCZip())
	resp, body := tp.call("POST", fnPath, map[string]any{"FunctionName": "crc", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r",
		"Handler": "h", "Code": map[string]string{"ZipFile": bad}}, nil)
	wantError(t, "CreateFunction", resp, body, 400, "InvalidParameterValueException", "Could not unzip uploaded file")
	tp.create("crc", nil)
	resp, body = tp.call("PUT", fnPath+"crc/code", map[string]any{"ZipFile": bad}, nil)
	wantError(t, "UpdateFunctionCode", resp, body, 400, "InvalidParameterValueException", "Could not unzip uploaded file")
}

func TestMissingOrNonExecutableBootstrapIsInvalidEntrypoint(t *testing.T) {
	tp := startPlatform(t, Config{})
	for name, pkg := range map[string][]byte{
		"nobootstrap": zipOf(nil, map[string][]byte{"main": []byte("x")}),
		"noexec": func() []byte {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			h := &zip.FileHeader{Name: "bootstrap", Method: zip.Store}
			h.SetMode(0o644)
			w, _ := zw.CreateHeader(h)
			w.Write([]byte("#!/bin/sh\n"))
			zw.Close()
			return buf.Bytes()
		}(),
	} {
		tp.create(name, map[string]any{"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(pkg)}})
		resp, _, body := tp.invoke(name, `{}`)
		var e struct{ ErrorType, ErrorMessage string }
		json.Unmarshal(body, &e)
		if resp.StatusCode != 200 || resp.Header.Get("X-Amz-Function-Error") != "Unhandled" || e.ErrorType != "Runtime.InvalidEntrypoint" ||
			!strings.HasPrefix(e.ErrorMessage, "RequestId: "+resp.Header.Get("X-Amzn-RequestId")+" Error: ") {
			t.Errorf("%s: %d %s %s", name, resp.StatusCode, resp.Header.Get("X-Amz-Function-Error"), body)
		}
	}
}

func TestInvokeChecksPayloadAndClientContext(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("chk", nil)
	resp, _, body := tp.invoke("chk", `not json`)
	wantError(t, "non-JSON payload", resp, body, 400, "InvalidRequestContentException", "Could not parse request body into json: ")
	post := func(headers map[string]string, payload string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", tp.url+fnPath+"chk/invocations", strings.NewReader(payload))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	for _, cc := range []string{"%%%", base64.StdEncoding.EncodeToString([]byte("not json")), base64.StdEncoding.EncodeToString([]byte("[1]"))} {
		resp, body := post(map[string]string{"X-Amz-Client-Context": cc}, `{}`)
		wantError(t, "client context "+cc, resp, body, 400, "InvalidRequestContentException", "Client context must be a valid Base64-encoded JSON object.")
	}
	cc := base64.StdEncoding.EncodeToString([]byte(`{"custom":{"k":"v"}}`))
	if resp, body := post(map[string]string{"X-Amz-Client-Context": cc}, `{"workload":{"kind":"noop"}}`); resp.StatusCode != 200 {
		t.Fatalf("valid client context: %d %s", resp.StatusCode, body)
	}
	// what the function was given: TestDecodeClientContext (lambdaapi)
	// Event: 202 with the request id; the async limit is 1 MB.
	resp, body = post(map[string]string{"X-Amz-Invocation-Type": "Event"}, `{"workload":{"kind":"noop"}}`)
	if resp.StatusCode != 202 || len(resp.Header.Get("X-Amzn-RequestId")) != 36 {
		t.Fatalf("Event: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	big := `{"pad":"` + strings.Repeat("x", maxAsyncPayload) + `"}`
	resp, body = post(map[string]string{"X-Amz-Invocation-Type": "Event"}, big)
	wantError(t, "Event above 1 MB", resp, body, 413, "RequestTooLargeException", "1048576")
	resp, body = post(nil, big) // within the synchronous limit
	if resp.StatusCode != 200 {
		t.Fatalf("a 1 MB synchronous payload: %d %s", resp.StatusCode, body)
	}
}

func TestFailedEventInvocationIsRetriedTwiceWithItsRequestID(t *testing.T) {
	needCurl(t)
	tp := startPlatform(t, Config{AsyncRetryDelays: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}})
	tp.createProbe("flaky", map[string]string{"FAIL": "1"}, nil)
	req, _ := http.NewRequest("POST", tp.url+fnPath+"flaky/invocations", strings.NewReader(`{}`))
	req.Header.Set("X-Amz-Invocation-Type", "Event")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Amzn-RequestId")
	logPath := filepath.Join(tp.cfg.DataDir, "logs", "flaky.log")
	var n int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(logPath)
		if n = strings.Count(string(b), "invoked "+id); n >= 3 {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // no fourth attempt
	b, _ := os.ReadFile(logPath)
	if n = strings.Count(string(b), "invoked "+id); n != 3 {
		t.Fatalf("attempts with request id %s: %d, want 3 (1 + 2 retries)\n%s", id, n, b)
	}
}

// Values outside Lambda's API model fail its validation (ValidationException, as botocore's
// model and AWS answer); inside the model but beyond the service's limits they are the
// service's InvalidParameterValueException. Both were InvalidParameterValueException.
func TestModelValidationBeforeServiceLimits(t *testing.T) {
	tp := startPlatform(t, Config{})
	for _, c := range []struct {
		what  string
		extra map[string]any
		code  string
		msg   string
	}{
		{"a name with a space", map[string]any{"FunctionName": "bad name!"}, "ValidationException", "at 'functionName' failed to satisfy constraint"},
		{"a 65-character name", map[string]any{"FunctionName": strings.Repeat("n", 65)}, "InvalidParameterValueException", "at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 64"},
		{"memory above the model", map[string]any{"MemorySize": 40000}, "ValidationException", "Value '40000' at 'memorySize' failed to satisfy constraint: Member must have value less than or equal to 32768"},
		{"memory above the service", map[string]any{"MemorySize": 20000}, "InvalidParameterValueException", "MemorySize 20000"},
		{"timeout 0", map[string]any{"Timeout": 0}, "ValidationException", "at 'timeout'"},
		{"timeout above 900 s", map[string]any{"Timeout": 901}, "InvalidParameterValueException", "Timeout 901"},
		{"ephemeral storage 100 MB", map[string]any{"EphemeralStorage": map[string]int{"Size": 100}}, "ValidationException", "at 'ephemeralStorage.size'"},
	} {
		req := map[string]any{"FunctionName": "v", "Runtime": "provided.al2023", "Role": "arn:aws:iam::000000000000:role/r", "Handler": "h",
			"Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}}
		for k, v := range c.extra {
			req[k] = v
		}
		resp, body := tp.call("POST", fnPath, req, nil)
		wantError(t, c.what, resp, body, http.StatusBadRequest, c.code, c.msg)
	}
}

// TestUpdateStaysInProgressForTheWindow: with Config.UpdateWindow an update is InProgress for at
// least the window however fast its work is, as AWS's recordings show it to a GetFunction right
// after the update (test_lambda_code_location_zipfile, test_publish_with_update): a second update
// is refused with AWS's message, invocations keep working, and it ends Successful. A creation
// is not held (boto3's function_active_v2 waiter answers at once).
func TestUpdateStaysInProgressForTheWindow(t *testing.T) {
	const window = 400 * time.Millisecond
	tp := startPlatform(t, Config{UpdateWindow: window})
	tp.create("win", nil)
	for _, update := range []struct{ path, body string }{
		{fnPath + "win/configuration", `{"Timeout": 7}`},
		{fnPath + "win/code", `{"ZipFile": "` + base64.StdEncoding.EncodeToString(agentZip) + `"}`},
	} {
		t0 := time.Now()
		resp, body := tp.call("PUT", update.path, json.RawMessage(update.body), nil)
		if c := decode[FunctionConfiguration](t, body); resp.StatusCode != 200 || c.LastUpdateStatus != "InProgress" {
			t.Fatalf("%s: %d %s", update.path, resp.StatusCode, body)
		}
		fn, err := tp.GetFunction(ref("win"))
		if c := fn.Config; err != nil || c.LastUpdateStatus != "InProgress" || c.LastUpdateStatusReason != "The function is being created." ||
			c.LastUpdateStatusReasonCode != "Creating" || c.State != "Active" {
			t.Fatalf("GetFunction right after %s: %+v %v", update.path, fn.Config, err)
		}
		resp, body = tp.call("PUT", fnPath+"win/configuration", map[string]any{"Timeout": 9}, nil)
		wantError(t, "a second update within the window", resp, body, 409, "ResourceConflictException",
			"The operation cannot be performed at this time. An update is in progress for resource: arn:aws:lambda:us-east-1:000000000000:function:win")
		if _, r, body := tp.invoke("win", `{"workload":{"kind":"noop"}}`); !r.OK {
			t.Fatalf("invoke during the update: %s", body)
		}
		waitReady(t, tp.Platform, "win")
		if d := time.Since(t0); d < window {
			t.Fatalf("%s was Successful after %v, within the %v window", update.path, d, window)
		}
	}
}
