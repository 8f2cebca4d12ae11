package platform

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// The FunctionConfiguration's shape and lifecycle as AWS answers them (issue #28): the values
// below are AWS's, as LocalStack's test_lambda_api recorded them against AWS
// (tests/conformance/replay/data/test_lambda_api.snapshot.json).

func (tp *testPlatform) config(method, path string, body any) (int, map[string]any) {
	tp.t.Helper()
	resp, b := tp.call(method, path, body, nil)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil && len(b) > 0 {
		tp.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return resp.StatusCode, m
}

func TestConfigurationCarriesAWSDefaultsAndItsLifecycle(t *testing.T) {
	tp := startPlatform(t, Config{})
	release := holdPreparation(t)
	status, c := tp.config("POST", fnPath, map[string]any{"FunctionName": "shape", "Runtime": "provided.al2023", "Role": "arn:aws:iam::123456789012:role/r",
		"Handler": "h", "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}})
	if status != 201 {
		t.Fatalf("CreateFunction: %d %v", status, c)
	}
	want := map[string]any{
		"LoggingConfig": map[string]any{"LogFormat": "Text", "LogGroup": "/aws/lambda/shape"},
		"TracingConfig": map[string]any{"Mode": "PassThrough"},
		"SnapStart":     map[string]any{"ApplyOn": "None", "OptimizationStatus": "Off"},
		"State":         "Pending", "StateReason": "The function is being created.", "StateReasonCode": "Creating",
	}
	for k, v := range want {
		if !reflect.DeepEqual(c[k], v) {
			t.Errorf("create answer's %s = %v, want %v", k, c[k], v)
		}
	}
	for _, k := range []string{"LastUpdateStatus", "LastUpdateStatusReason", "LastUpdateStatusReasonCode"} {
		if _, ok := c[k]; ok {
			t.Errorf("a Pending function has no %s on AWS: %v", k, c[k])
		}
	}
	rv, _ := c["RuntimeVersionConfig"].(map[string]any)
	arn, _ := rv["RuntimeVersionArn"].(string)
	if !strings.HasPrefix(arn, "arn:aws:lambda:us-east-1::runtime:") || len(arn) != len("arn:aws:lambda:us-east-1::runtime:")+64 {
		t.Errorf("RuntimeVersionArn = %q", arn)
	}
	rev1 := c["RevisionId"]
	release()
	waitReady(t, tp.Platform, "shape")
	_, got := tp.config("GET", fnPath+"shape", nil)
	g := got["Configuration"].(map[string]any)
	if g["RevisionId"] == rev1 || g["LastUpdateStatus"] != "Successful" {
		t.Errorf("Active: a new RevisionId (was %v) and LastUpdateStatus Successful: %v", rev1, g)
	}
	if _, ok := got["Tags"]; ok {
		t.Errorf("GetFunction of an untagged function has no Tags on AWS: %v", got["Tags"])
	}
	if rvg, _ := g["RuntimeVersionConfig"].(map[string]any); rvg["RuntimeVersionArn"] != arn {
		t.Errorf("one runtime version per runtime: %v, then %v", arn, g["RuntimeVersionConfig"])
	}

	// Lists leave out the state, the update status and the runtime version.
	_, l := tp.config("GET", fnPath, nil)
	_, v := tp.config("GET", fnPath+"shape/versions", nil)
	for what, item := range map[string]any{"ListFunctions": l["Functions"].([]any)[0], "ListVersionsByFunction": v["Versions"].([]any)[0]} {
		m := item.(map[string]any)
		for _, k := range []string{"State", "StateReason", "LastUpdateStatus", "RuntimeVersionConfig"} {
			if _, ok := m[k]; ok {
				t.Errorf("%s shows %s: %v", what, k, m[k])
			}
		}
		if m["LoggingConfig"] == nil || m["SnapStart"] == nil {
			t.Errorf("%s keeps LoggingConfig and SnapStart: %v", what, m)
		}
	}

	// A finished update gets a new RevisionId again.
	_, u := tp.config("PUT", fnPath+"shape/configuration", map[string]any{"TracingConfig": map[string]any{"Mode": "Active"}})
	waitReady(t, tp.Platform, "shape")
	_, done := tp.config("GET", fnPath+"shape/configuration", nil)
	if done["RevisionId"] == u["RevisionId"] || !reflect.DeepEqual(done["TracingConfig"], map[string]any{"Mode": "Active"}) {
		t.Errorf("after the update: %v (the update answered %v)", done, u["RevisionId"])
	}
}

// LoggingConfig merges as AWS merges it: each recorded case of TestLoggingConfig.
func TestLoggingConfigMergesAsAWSDoes(t *testing.T) {
	tp := startPlatform(t, Config{})
	deflt := map[string]any{"LogFormat": "Text", "LogGroup": "/aws/lambda/lg"}
	jsonInfo := map[string]any{"ApplicationLogLevel": "INFO", "LogFormat": "JSON", "LogGroup": "/aws/lambda/lg", "SystemLogLevel": "INFO"}
	steps := []struct {
		set, want map[string]any
	}{
		{map[string]any{"LogFormat": "JSON"}, jsonInfo}, // partial_config0, format_switch
		{map[string]any{"LogFormat": "Text"}, deflt},    // format_switch: the levels go
		{map[string]any{"LogFormat": "JSON", "ApplicationLogLevel": "DEBUG"}, // partial_config1
			map[string]any{"ApplicationLogLevel": "DEBUG", "LogFormat": "JSON", "LogGroup": "/aws/lambda/lg", "SystemLogLevel": "INFO"}},
		{map[string]any{"LogFormat": "Text"}, deflt},
		{map[string]any{"LogFormat": "JSON", "SystemLogLevel": "DEBUG"}, // partial_config2
			map[string]any{"ApplicationLogLevel": "INFO", "LogFormat": "JSON", "LogGroup": "/aws/lambda/lg", "SystemLogLevel": "DEBUG"}},
		{map[string]any{"LogFormat": "Text"}, deflt},
		{map[string]any{"LogGroup": "cool_lambda"}, map[string]any{"LogFormat": "Text", "LogGroup": "cool_lambda"}}, // partial_config3
	}
	tp.create("lg", nil)
	for i, s := range steps {
		status, c := tp.config("PUT", fnPath+"lg/configuration", map[string]any{"LoggingConfig": s.set})
		if status != 200 || !reflect.DeepEqual(c["LoggingConfig"], s.want) {
			t.Errorf("step %d: set %v: %d %v, want %v", i, s.set, status, c["LoggingConfig"], s.want)
		}
		waitReady(t, tp.Platform, "lg")
	}
	// CreateFunction takes it too (test_function_advanced_logging_configuration).
	tp.create("lg2", map[string]any{"LoggingConfig": map[string]any{"LogFormat": "JSON"}})
	_, c := tp.config("GET", fnPath+"lg2/configuration", nil)
	if want := map[string]any{"ApplicationLogLevel": "INFO", "LogFormat": "JSON", "LogGroup": "/aws/lambda/lg2", "SystemLogLevel": "INFO"}; !reflect.DeepEqual(c["LoggingConfig"], want) {
		t.Errorf("created with JSON: %v", c["LoggingConfig"])
	}
	resp, body := tp.call("PUT", fnPath+"lg/configuration", map[string]any{"LoggingConfig": map[string]any{"LogFormat": "XML"}}, nil)
	wantError(t, "LogFormat XML", resp, body, 400, "ValidationException", "Value 'XML' at 'loggingConfig.logFormat' failed to satisfy constraint: Member must satisfy enum value set: [Text, JSON]")
	resp, body = tp.call("PUT", fnPath+"lg/configuration", map[string]any{"TracingConfig": map[string]any{"Mode": "On"}}, nil)
	wantError(t, "TracingConfig On", resp, body, 400, "ValidationException", "at 'tracingConfig.mode'")
}

func TestRevisionIdsAsAWSIssuesThem(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("rv", nil)
	zip := base64.StdEncoding.EncodeToString(agentZip)
	const msg = "The Revision Id provided does not match the latest Revision Id. Call the GetFunction/GetAlias API to retrieve the latest Revision Id"
	resp, body := tp.call("PUT", fnPath+"rv/code", map[string]any{"ZipFile": zip, "RevisionId": "wrong"}, nil)
	wantError(t, "UpdateFunctionCode with a wrong RevisionId", resp, body, http.StatusPreconditionFailed, "PreconditionFailedException", msg)
	resp, body = tp.call("PUT", fnPath+"rv/configuration", map[string]any{"Timeout": 9, "RevisionId": "wrong"}, nil)
	wantError(t, "UpdateFunctionConfiguration with a wrong RevisionId", resp, body, http.StatusPreconditionFailed, "PreconditionFailedException", msg)
	resp, body = tp.call("POST", fnPath+"rv/versions", map[string]any{"RevisionId": "wrong"}, nil)
	wantError(t, "PublishVersion with a wrong RevisionId", resp, body, http.StatusPreconditionFailed, "PreconditionFailedException", msg)

	_, c := tp.config("GET", fnPath+"rv/configuration", nil)
	if status, u := tp.config("PUT", fnPath+"rv/code", map[string]any{"ZipFile": zip, "RevisionId": c["RevisionId"]}); status != 200 || u["RevisionId"] == c["RevisionId"] {
		t.Fatalf("UpdateFunctionCode with the current RevisionId: %d %v", status, u)
	}
	waitReady(t, tp.Platform, "rv")
	_, before := tp.config("GET", fnPath+"rv/configuration", nil)
	_, v := tp.config("POST", fnPath+"rv/versions", map[string]any{"RevisionId": before["RevisionId"]})
	_, after := tp.config("GET", fnPath+"rv/configuration", nil)
	_, v1 := tp.config("GET", fnPath+"rv/configuration?Qualifier=1", nil)
	if after["RevisionId"] == before["RevisionId"] || v1["RevisionId"] != v["RevisionId"] {
		t.Errorf("PublishVersion changes $LATEST's RevisionId (%v -> %v), the version keeps its own (%v, %v)",
			before["RevisionId"], after["RevisionId"], v["RevisionId"], v1["RevisionId"])
	}
}

// CreateFunction with Publish answers version 1 under the unqualified ARN.
func TestPublishOnCreateAnswersTheUnqualifiedARN(t *testing.T) {
	tp := startPlatform(t, Config{})
	_, c := tp.config("POST", fnPath, map[string]any{"FunctionName": "pc", "Runtime": "provided.al2023", "Role": "arn:aws:iam::123456789012:role/r",
		"Handler": "h", "Publish": true, "Code": map[string]string{"ZipFile": base64.StdEncoding.EncodeToString(agentZip)}})
	if c["Version"] != "1" || c["FunctionArn"] != "arn:aws:lambda:us-east-1:000000000000:function:pc" {
		t.Fatalf("CreateFunction with Publish: %v %v", c["Version"], c["FunctionArn"])
	}
}

// Deleting a version the function does not have succeeds, again and again; once the function
// is gone it is ResourceNotFound (test_delete_on_nonexisting_version).
func TestDeletingAMissingVersionSucceeds(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("dv", nil)
	for i := 0; i < 2; i++ {
		if resp, body := tp.call("DELETE", fnPath+"dv?Qualifier=1233", nil, nil); resp.StatusCode != 204 {
			t.Fatalf("delete of a missing version: %d %s", resp.StatusCode, body)
		}
	}
	tp.call("DELETE", fnPath+"dv", nil, nil)
	resp, body := tp.call("DELETE", fnPath+"dv?Qualifier=1233", nil, nil)
	wantError(t, "a missing function's version", resp, body, 404, "ResourceNotFoundException", "Function not found")
}

// TotalCodeSize counts each published version's package, even $LATEST's own code again
// (test_account_settings_total_code_size*).
func TestTotalCodeSizeCountsPublishedVersions(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("tc", nil)
	n := int64(len(agentZip))
	if _, use := tp.accountSettings(); use.TotalCodeSize != n {
		t.Fatalf("one function: %+v", use)
	}
	tp.config("PUT", fnPath+"tc/configuration", map[string]any{"Timeout": 7})
	waitReady(t, tp.Platform, "tc")
	if _, use := tp.accountSettings(); use.TotalCodeSize != n {
		t.Fatalf("a configuration update adds nothing: %+v", use)
	}
	tp.config("POST", fnPath+"tc/versions", map[string]any{})
	if _, use := tp.accountSettings(); use.TotalCodeSize != 2*n {
		t.Fatalf("a published version counts its package: %+v", use)
	}
	tp.config("PUT", fnPath+"tc/code", map[string]any{"ZipFile": base64.StdEncoding.EncodeToString(agentZip), "Publish": true})
	if _, use := tp.accountSettings(); use.TotalCodeSize != 3*n {
		t.Fatalf("UpdateFunctionCode with Publish adds a version: %+v", use)
	}
	waitReady(t, tp.Platform, "tc")
	tp.call("DELETE", fnPath+"tc?Qualifier=1", nil, nil)
	if _, use := tp.accountSettings(); use.TotalCodeSize != 2*n {
		t.Fatalf("a deleted version counts no more: %+v", use)
	}
}

// UpdateAlias of an alias that does not exist: AWS's words differ from GetAlias's
// (test_non_existent_alias_update).
func TestUpdateOfAMissingAliasIsAliasNotFound(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("ua", nil)
	resp, body := tp.call("PUT", fnPath+"ua/aliases/non-existent", map[string]any{"Description": "x"}, nil)
	wantError(t, "UpdateAlias", resp, body, 404, "ResourceNotFoundException",
		"Alias not found: arn:aws:lambda:us-east-1:000000000000:function:ua:non-existent")
}

// Tagging and untagging give $LATEST a new RevisionId, as on AWS (TestLambdaTags::test_tag_lifecycle).
func TestTagsChangeTheRevisionId(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("tg", nil)
	arn := url.PathEscape("arn:aws:lambda:us-east-1:000000000000:function:tg")
	seen := map[any]bool{}
	for i, step := range []func(){
		func() {},
		func() {
			tp.call("POST", "/2017-03-31/tags/"+arn, map[string]any{"Tags": map[string]string{"a": "1"}}, nil)
		},
		func() {
			tp.call("POST", "/2017-03-31/tags/"+arn, map[string]any{"Tags": map[string]string{"a": "2"}}, nil)
		},
		func() { tp.call("DELETE", "/2017-03-31/tags/"+arn+"?tagKeys=a", nil, nil) },
	} {
		step()
		_, c := tp.config("GET", fnPath+"tg/configuration", nil)
		if seen[c["RevisionId"]] {
			t.Errorf("step %d kept RevisionId %v", i, c["RevisionId"])
		}
		seen[c["RevisionId"]] = true
	}
}
