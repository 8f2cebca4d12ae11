package platform

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Resource-based policies, function URL configs, event invoke, provisioned concurrency and
// recursion configs (policy.go, functionurl.go, eventinvoke.go, provisioned.go, recursion.go):
// kept per $LATEST, version and alias, with AWS's recorded answers (the replay suite holds the
// rest of them), surviving a restart, and gone with the alias they belong to.
func TestQualifiedSettingsAPI(t *testing.T) {
	tp := startPlatform(t, Config{Concurrency: 20})
	tp.create("q", nil)
	tp.create("dest", nil)
	resp, body := tp.call("POST", fnPath+"q/versions", map[string]any{}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("publish: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("POST", fnPath+"q/aliases", map[string]any{"Name": "live", "FunctionVersion": "1"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("alias: %d %s", resp.StatusCode, body)
	}
	alias := decode[Alias](t, body)
	arn := key("q").arn()

	// AddPermission: the statement as AWS writes it, then the policy and its RevisionId (the
	// function's, which the change renewed).
	before, _ := tp.GetFunction(ref("q"))
	resp, body = tp.call("POST", fnPath+"q/policy", map[string]any{"StatementId": "s3", "Action": "lambda:InvokeFunction",
		"Principal": "s3.amazonaws.com", "SourceArn": "arn:aws:s3:::bucket"}, nil)
	wantStatement := `{"Sid":"s3","Effect":"Allow","Principal":{"Service":"s3.amazonaws.com"},"Action":"lambda:InvokeFunction","Resource":"` +
		arn + `","Condition":{"ArnLike":{"AWS:SourceArn":"arn:aws:s3:::bucket"}}}`
	if resp.StatusCode != 201 || decode[map[string]string](t, body)["Statement"] != wantStatement {
		t.Fatalf("AddPermission: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", fnPath+"q/policy", nil, nil)
	pol := decode[map[string]string](t, body)
	after, _ := tp.GetFunction(ref("q"))
	if resp.StatusCode != 200 || pol["Policy"] != `{"Version":"2012-10-17","Id":"default","Statement":[`+wantStatement+`]}` ||
		pol["RevisionId"] != after.Config.RevisionId || after.Config.RevisionId == before.Config.RevisionId {
		t.Fatalf("GetPolicy: %d %s (function revision %s -> %s)", resp.StatusCode, body, before.Config.RevisionId, after.Config.RevisionId)
	}
	resp, body = tp.call("POST", fnPath+"q/policy", map[string]any{"StatementId": "s3", "Action": "lambda:InvokeFunction", "Principal": "s3.amazonaws.com"}, nil)
	wantAPIError(t, "a statement id twice", resp, body, 409, "ResourceConflictException", "The statement id (s3) provided already exists.")
	resp, body = tp.call("POST", fnPath+"q/policy?Qualifier=live", map[string]any{"StatementId": "s3", "Action": "lambda:InvokeFunction",
		"Principal": "123456789012", "RevisionId": "wrong"}, nil)
	wantAPIError(t, "a stale RevisionId", resp, body, 412, "PreconditionFailedException", "Call the GetPolicy API")
	resp, body = tp.call("POST", fnPath+"q/policy?Qualifier=live", map[string]any{"StatementId": "s3", "Action": "lambda:InvokeFunction",
		"Principal": "123456789012", "RevisionId": alias.RevisionId}, nil)
	if resp.StatusCode != 201 || !strings.Contains(string(body), `arn:aws:iam::123456789012:root`) {
		t.Fatalf("AddPermission to the alias (same sid, another qualifier): %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("GET", fnPath+"q/policy?Qualifier=1", nil, nil)
	wantAPIError(t, "a version's policy is its own", resp, body, 404, "ResourceNotFoundException", "The resource you requested does not exist.")
	resp, body = tp.call("DELETE", fnPath+"q/policy/nope", nil, nil)
	wantAPIError(t, "removing a missing statement", resp, body, 404, "ResourceNotFoundException", "Statement nope is not found in resource policy.")

	// Function URL configs: $LATEST and aliases, never a version.
	resp, body = tp.call("POST", "/2021-10-31/functions/q/url", map[string]any{"AuthType": "NONE"}, nil)
	if resp.StatusCode != 201 || strings.Contains(string(body), "InvokeMode") {
		t.Fatalf("CreateFunctionUrlConfig: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("POST", "/2021-10-31/functions/q/url?Qualifier=live", map[string]any{"AuthType": "AWS_IAM"}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("CreateFunctionUrlConfig on the alias: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("POST", "/2021-10-31/functions/q/url", map[string]any{"AuthType": "NONE"}, nil)
	wantAPIError(t, "a second URL", resp, body, 409, "ResourceConflictException", "FunctionUrlConfig exists for this Lambda function")
	resp, body = tp.call("POST", "/2021-10-31/functions/q/url?Qualifier=1", map[string]any{"AuthType": "NONE"}, nil)
	wantAPIError(t, "a version's URL", resp, body, 400, "ValidationException", "Value '1' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: ((?!^")

	// Event invoke and provisioned concurrency configs, recursion config.
	resp, body = tp.call("PUT", "/2019-09-25/functions/q/event-invoke-config?Qualifier=1", map[string]any{"MaximumRetryAttempts": 0,
		"DestinationConfig": map[string]any{"OnFailure": map[string]string{"Destination": key("dest").arn()}}}, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"FunctionArn":"`+arn+`:1"`) {
		t.Fatalf("PutFunctionEventInvokeConfig: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("PUT", "/2019-09-25/functions/q/event-invoke-config", map[string]any{"DestinationConfig": map[string]any{
		"OnSuccess": map[string]string{"Destination": arn}}}, nil)
	wantAPIError(t, "itself as destination", resp, body, 400, "InvalidParameterValueException", "You can't specify the function as a destination for itself.")
	resp, body = tp.call("PUT", "/2019-09-30/functions/q/provisioned-concurrency?Qualifier=live", map[string]any{"ProvisionedConcurrentExecutions": 1}, nil)
	if resp.StatusCode != 202 || !strings.Contains(string(body), `"Status":"IN_PROGRESS"`) {
		t.Fatalf("PutProvisionedConcurrencyConfig: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("PUT", "/2019-09-30/functions/q/provisioned-concurrency?Qualifier=1", map[string]any{"ProvisionedConcurrentExecutions": 1}, nil)
	wantAPIError(t, "a version provisioned through its alias", resp, body, 409, "ResourceConflictException", "Version is pointed by a Provisioned Concurrency alias")
	resp, body = tp.call("PUT", "/2024-08-31/functions/q/recursion-config", map[string]any{"RecursiveLoop": "Allow"}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("PutFunctionRecursionConfig: %d %s", resp.StatusCode, body)
	}

	// All of it survives a restart.
	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, Concurrency: 20, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if pol2, rev, err := p2.GetPolicy(ref("q")); err != nil || pol2 != pol["Policy"] || rev != pol["RevisionId"] {
		t.Fatalf("policy after a restart: %s %s %v", pol2, rev, err)
	}
	if c, err := p2.GetFunctionURLConfig(funcRef{key("q"), "live"}); err != nil || c.AuthType != "AWS_IAM" {
		t.Fatalf("URL config after a restart: %+v %v", c, err)
	}
	if c, err := p2.GetFunctionEventInvokeConfig(funcRef{key("q"), "1"}); err != nil || c.MaximumRetryAttempts == nil || *c.MaximumRetryAttempts != 0 {
		t.Fatalf("event invoke config after a restart: %+v %v", c, err)
	}
	if c, err := p2.GetProvisionedConcurrencyConfig(funcRef{key("q"), "live"}); err != nil || c.Status != "READY" || c.RequestedProvisionedConcurrentExecutions != 1 {
		t.Fatalf("provisioned config after a restart: %+v %v", c, err)
	}
	if loop, err := p2.GetFunctionRecursionConfig(key("q")); err != nil || loop != "Allow" {
		t.Fatalf("recursion config after a restart: %s %v", loop, err)
	}

	// Deleting the alias takes its settings; a new alias of the same name starts without them.
	if err := p2.DeleteAlias(key("q"), "live"); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.CreateAlias(key("q"), AliasInput{Name: "live", FunctionVersion: ptr("1")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p2.GetPolicy(funcRef{key("q"), "live"}); err == nil {
		t.Fatal("a new alias inherited the deleted one's policy")
	}
	if _, err := p2.GetFunctionURLConfig(funcRef{key("q"), "live"}); err == nil {
		t.Fatal("a new alias inherited the deleted one's URL")
	}
	if _, err := p2.GetProvisionedConcurrencyConfig(funcRef{key("q"), "live"}); awsError(err).Code != "ProvisionedConcurrencyConfigNotFoundException" {
		t.Fatalf("a new alias inherited the deleted one's provisioned concurrency: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// MaximumRetryAttempts of an event invoke config lowers the retries of a failed Event
// invocation (async.go): 0 = one attempt, 1 = two; without a config Lambda's two retries stay
// (TestFailedEventInvocationIsRetriedTwiceWithItsRequestID).
func TestEventInvokeConfigLimitsRetries(t *testing.T) {
	needCurl(t)
	tp := startPlatform(t, Config{AsyncRetryDelays: []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}})
	for _, retries := range []int{0, 1} {
		name := map[int]string{0: "noretry", 1: "oneretry"}[retries]
		tp.createProbe(name, map[string]string{"FAIL": "1"}, nil)
		resp, body := tp.call("PUT", "/2019-09-25/functions/"+name+"/event-invoke-config", map[string]any{"MaximumRetryAttempts": retries}, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("PutFunctionEventInvokeConfig: %d %s", resp.StatusCode, body)
		}
		req, _ := http.NewRequest("POST", tp.url+fnPath+name+"/invocations", strings.NewReader(`{}`))
		req.Header.Set("X-Amz-Invocation-Type", "Event")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		id := r.Header.Get("X-Amzn-RequestId")
		logPath := filepath.Join(tp.cfg.DataDir, "logs", name+".log")
		count := func() int { b, _ := os.ReadFile(logPath); return strings.Count(string(b), "invoked "+id) }
		for deadline := time.Now().Add(20 * time.Second); count() < retries+1 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		}
		time.Sleep(500 * time.Millisecond) // longer than both retry delays: no further attempt
		if n := count(); n != retries+1 {
			b, _ := json.Marshal(map[string]any{"retries": retries, "attempts": n})
			t.Fatalf("attempts: %s, want %d", b, retries+1)
		}
	}
}

// A layer version's policy (layerpolicy.go) has a RevisionId of its own, renewed by every
// change, and is kept in the version's record across a restart.
func TestLayerVersionPolicy(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.publishLayer("lib", zipOf(nil, map[string][]byte{"f": []byte("x")}), nil)
	path := "/2018-10-31/layers/lib/versions/1/policy"
	resp, body := tp.call("POST", path, map[string]any{"StatementId": "all", "Action": "lambda:GetLayerVersion", "Principal": "*"}, nil)
	added := decode[map[string]string](t, body)
	want := `{"Sid":"all","Effect":"Allow","Principal":"*","Action":"lambda:GetLayerVersion","Resource":"arn:aws:lambda:us-east-1:000000000000:layer:lib:1"}`
	if resp.StatusCode != 201 || added["Statement"] != want || added["RevisionId"] == "" {
		t.Fatalf("AddLayerVersionPermission: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("POST", path+"?RevisionId=stale", map[string]any{"StatementId": "acct", "Action": "lambda:GetLayerVersion", "Principal": "123456789012"}, nil)
	wantAPIError(t, "a stale RevisionId", resp, body, 412, "PreconditionFailedException", "Call the GetLayerPolicy API")
	resp, body = tp.call("POST", path+"?RevisionId="+added["RevisionId"], map[string]any{"StatementId": "acct", "Action": "lambda:GetLayerVersion", "Principal": "123456789012"}, nil)
	if resp.StatusCode != 201 || decode[map[string]string](t, body)["RevisionId"] == added["RevisionId"] {
		t.Fatalf("a second statement renews the RevisionId: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("POST", "/2018-10-31/layers/lib/versions/2/policy", map[string]any{"StatementId": "x", "Action": "lambda:GetLayerVersion", "Principal": "*"}, nil)
	wantAPIError(t, "a missing version", resp, body, 404, "ResourceNotFoundException", "Layer version arn:aws:lambda:us-east-1:000000000000:layer:lib:2 does not exist.")
	_, body = tp.call("GET", path, nil, nil)
	got := decode[map[string]string](t, body)

	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if pol, rev, err := p2.GetLayerVersionPolicy(defaultRegion, "lib", 1); err != nil || pol != got["Policy"] || rev != got["RevisionId"] ||
		!strings.Contains(pol, `"Principal":{"AWS":"arn:aws:iam::123456789012:root"}`) {
		t.Fatalf("after a restart: %s %s %v (before: %v)", pol, rev, err, got)
	}
	if err := p2.RemoveLayerVersionPermission(defaultRegion, "lib", 1, "all", ""); err != nil {
		t.Fatal(err)
	}
	if err := p2.RemoveLayerVersionPermission(defaultRegion, "lib", 1, "acct", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p2.GetLayerVersionPolicy(defaultRegion, "lib", 1); err == nil || !strings.Contains(err.Error(), "No policy is associated") {
		t.Fatalf("the policy goes with its last statement: %v", err)
	}
}

// Code signing configs (codesigning.go): kept across a restart, a function's with the function,
// a config in use not deleted (AWS: "only if no function is using it"), a missing one answered
// without Type as AWS answers it.
func TestCodeSigningConfigs(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("signed", nil)
	resp, body := tp.call("POST", "/2020-04-22/code-signing-configs/", map[string]any{"AllowedPublishers": map[string]any{
		"SigningProfileVersionArns": []string{"arn:aws:signer:us-east-1:000000000000:/signing-profiles/p"}}}, nil)
	csc := decode[map[string]CodeSigningConfig](t, body)["CodeSigningConfig"]
	if resp.StatusCode != 201 || !cscArnRE.MatchString(csc.CodeSigningConfigArn) || csc.CodeSigningPolicies.UntrustedArtifactOnDeployment != "Warn" {
		t.Fatalf("CreateCodeSigningConfig: %d %s", resp.StatusCode, body)
	}
	escaped := strings.ReplaceAll(csc.CodeSigningConfigArn, ":", "%3A")
	resp, body = tp.call("PUT", "/2020-06-30/functions/signed/code-signing-config", map[string]any{"CodeSigningConfigArn": csc.CodeSigningConfigArn}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("PutFunctionCodeSigningConfig: %d %s", resp.StatusCode, body)
	}
	resp, body = tp.call("DELETE", "/2020-04-22/code-signing-configs/"+escaped, nil, nil)
	wantAPIError(t, "deleting a config in use", resp, body, 409, "ResourceConflictException", "used by 1 function")
	missing := csc.CodeSigningConfigArn[:len(csc.CodeSigningConfigArn)-1] + "x"
	if strings.HasSuffix(csc.CodeSigningConfigArn, "x") {
		missing = csc.CodeSigningConfigArn[:len(csc.CodeSigningConfigArn)-1] + "y"
	}
	resp, body = tp.call("GET", "/2020-04-22/code-signing-configs/"+missing, nil, nil)
	wantAPIError(t, "a missing config", resp, body, 404, "ResourceNotFoundException", "can not be found.")
	if strings.Contains(string(body), `"Type"`) {
		t.Fatalf("AWS answers a missing config without Type: %s", body)
	}

	tp.Close()
	p2, err := New(Config{DataDir: tp.cfg.DataDir, DefaultProfile: ProfileLambda, Isolation: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if arns, _, err := p2.ListFunctionsByCodeSigningConfig(csc.CodeSigningConfigArn, "", 50); err != nil || len(arns) != 1 || arns[0] != key("signed").arn() {
		t.Fatalf("after a restart: %v %v", arns, err)
	}
	if err := p2.DeleteFunctionCodeSigningConfig(key("signed")); err != nil {
		t.Fatal(err)
	}
	if err := p2.DeleteCodeSigningConfig(csc.CodeSigningConfigArn); err != nil {
		t.Fatalf("a config no function uses is deleted: %v", err)
	}
	if list, _, _ := p2.ListCodeSigningConfigs(defaultRegion, "", 50); len(list) != 0 {
		t.Fatalf("deleted config still listed: %+v", list)
	}
}
