package platform

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// AWS's answers below are recorded in tests/conformance/replay/data/test_lambda_api.snapshot.json.

func TestModelChecksOfOtherFieldsAreAWSs(t *testing.T) {
	for _, c := range []struct {
		what string
		err  error
		code string
		msg  string
	}{
		{"FunctionVersion", checkFunctionVersionParam("invalid"), "ValidationException",
			"1 validation error detected: Value 'invalid' at 'functionVersion' failed to satisfy constraint: Member must satisfy enum value set: [ALL]"},
		{"CompatibleRuntime", checkLayerFilter(LayerFilter{Runtime: "runtimedoesnotexist"}), "ValidationException",
			"Value 'runtimedoesnotexist' at 'compatibleRuntime' failed to satisfy constraint: Member must satisfy enum value set: [ruby3.5, ruby2.6, "},
		{"CompatibleArchitecture", checkLayerFilter(LayerFilter{Architecture: "archdoesnotexist"}), "ValidationException",
			"1 validation error detected: Value 'archdoesnotexist' at 'compatibleArchitecture' failed to satisfy constraint: Member must satisfy enum value set: [x86_64, arm64]"},
		{"both compatibility lists", checkLayerCompatibility([]string{"invalidruntime", "nodejs20.x"}, []string{"invalidarch", "x86_64"}), "ValidationException",
			"2 validation errors detected: Value '[invalidruntime, nodejs20.x]' at 'compatibleRuntimes' failed to satisfy constraint: Member must satisfy enum value set: " + awsRuntimeEnum +
				"; Value '[invalidarch, x86_64]' at 'compatibleArchitectures' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [x86_64, arm64], Member must not be null]"},
		{"layer version 0", checkLayerVersionNumber(0), "InvalidParameterValueException", "Layer Version Cannot be less than 1"},
		{"SnapStart", checkSnapStart(&SnapStart{ApplyOn: "invalidOption"}), "ValidationException",
			"1 validation error detected: Value 'invalidOption' at 'snapStart.applyOn' failed to satisfy constraint: Member must satisfy enum value set: [PublishedVersions, None]"},
		{"a malformed security group", checkVpcConfig(&VpcConfig{SubnetIds: []string{"subnet-1"}, SecurityGroupIds: []string{"bad-format-1"}}), "ValidationException",
			"1 validation error detected: Value '[bad-format-1]' at 'vpcConfig.securityGroupIds' failed to satisfy constraint: Member must satisfy constraint: [Member must have length less than or equal to 1024, Member must have length greater than or equal to 0, Member must satisfy regular expression pattern: sg-[0-9a-zA-Z]*]"},
		{"a security group (none exists here)", checkVpcConfig(&VpcConfig{SubnetIds: []string{"subnet-1"}, SecurityGroupIds: []string{"sg-1"}}), "InvalidParameterValueException",
			"Error occurred while DescribeSecurityGroups. EC2 Error Code: InvalidGroup.NotFound. EC2 Error Message: The security group 'sg-1' does not exist"},
		{"a qualified ARN", unqualifiedOnly(funcRef{fnKey{"us-east-1", "f"}, "$LATEST"}), "InvalidParameterValueException",
			"This operation is permitted on Lambda functions only. Aliases and versions do not support this operation. Please specify either a function name or an unqualified function ARN."},
	} {
		e := apiErr(t, c.err)
		if e.Code != c.code || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %s %s, want %s %s", c.what, e.Code, e.Msg, c.code, c.msg)
		}
	}
	for what, err := range map[string]error{
		"ALL": checkFunctionVersionParam("ALL"), "no filter": checkLayerFilter(LayerFilter{}),
		"a listed runtime": checkLayerFilter(LayerFilter{Runtime: "python3.12", Architecture: "arm64"}),
		"no VPC":           checkVpcConfig(&VpcConfig{}), "SnapStart None": checkSnapStart(&SnapStart{ApplyOn: "None"}),
	} {
		if err != nil {
			t.Errorf("%s refused: %v", what, err)
		}
	}
}

func TestTagsResourcesAsAWSAnswers(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:lambda:us-east-1:000000000000:event-source-mapping:4c915a50-2751-4d24-aed1-1e5041ce1adf": "Event source mapping not found: arn:aws:lambda:us-east-1:000000000000:event-source-mapping:4c915a50-2751-4d24-aed1-1e5041ce1adf",
		"arn:aws:lambda:us-east-1:000000000000:capacity-provider:cp":                                      "Capacity provider not found: arn:aws:lambda:us-east-1:000000000000:capacity-provider:cp",
		"arn:aws:lambda:us-east-1:000000000000:capacity-provider:cp:alias":                                "Member must satisfy regular expression pattern: " + taggablePattern,
		"arn:aws:lambda:us-east-1:000000000000:foobar:x":                                                  "Member must satisfy regular expression pattern: " + taggablePattern,
		"arn:aws:lambda:us-east-1:000000000000:function:f:1":                                              "Tags on function aliases and versions are not supported. Please specify a function ARN.",
	} {
		_, err := functionOfARN(arn)
		if err == nil || !strings.Contains(awsError(err).Msg, want) {
			t.Errorf("%s: %v, want %s", arn, err, want)
		}
	}
	if k, err := functionOfARN("arn:aws:lambda:eu-west-1:000000000000:function:f"); err != nil || k != (fnKey{"eu-west-1", "f"}) {
		t.Errorf("a function's ARN: %v %v", k, err)
	}
}

func TestEnvironmentIsMeasuredInTheRequestsOrder(t *testing.T) {
	var env Environment
	if err := json.Unmarshal([]byte(`{"Variables":{"SMALL_VAR":"ok","LARGE_VAR":"`+strings.Repeat("x", 4096)+`"}}`), &env); err != nil {
		t.Fatal(err)
	}
	err := checkEnvironment(env.Variables, env.order)
	if err == nil || !strings.Contains(err.Error(), `String measured: {"SMALL_VAR":"ok","LARGE_VAR":"xxx`) {
		t.Errorf("4 KB message: %v", err)
	}
	// Without the request's order (a configuration built in Go), by key.
	if got := string(measuredEnvironment(map[string]string{"b": "<", "a": "1"}, nil)); got != `{"a":"1","b":"<"}` {
		t.Errorf("measured %s", got)
	}
}

func TestListFunctionsAllConcurrencyAndAliasAnswers(t *testing.T) {
	tp := startPlatform(t, Config{})
	tp.create("one", map[string]any{"Publish": true})
	tp.create("two", nil)
	var arns []string
	marker := ""
	for { // one per page, as boto3's paginator with PageSize 1
		resp, body := tp.call("GET", "/2015-03-31/functions/?FunctionVersion=ALL&MaxItems=1&Marker="+url.QueryEscape(marker), nil, nil)
		var page struct {
			Functions  []FunctionConfiguration
			NextMarker string
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &page) != nil {
			t.Fatalf("ListFunctions ALL: %d %s", resp.StatusCode, body)
		}
		for _, f := range page.Functions {
			arns = append(arns, f.FunctionArn)
		}
		if marker = page.NextMarker; marker == "" {
			break
		}
	}
	base := "arn:aws:lambda:us-east-1:000000000000:function:"
	if want := []string{base + "one:$LATEST", base + "one:1", base + "two:$LATEST"}; strings.Join(arns, " ") != strings.Join(want, " ") {
		t.Errorf("ListFunctions ALL: %v, want %v", arns, want)
	}
	resp, body := tp.call("GET", "/2015-03-31/functions/?FunctionVersion=invalid", nil, nil)
	wantAPIError(t, "FunctionVersion invalid", resp, body, 400, "ValidationException", "enum value set: [ALL]")
	resp, body = tp.call("PUT", "/2017-10-31/functions/"+url.PathEscape(base+"one:$LATEST")+"/concurrency", map[string]int{"ReservedConcurrentExecutions": 0}, nil)
	wantAPIError(t, "concurrency on a qualified ARN", resp, body, 400, "InvalidParameterValueException", "This operation is permitted on Lambda functions only.")
	resp, body = tp.call("PUT", "/2017-10-31/functions/nope/concurrency", map[string]int{"ReservedConcurrentExecutions": 1}, nil)
	wantAPIError(t, "concurrency of a missing function", resp, body, 404, "ResourceNotFoundException", "Function not found: "+base+"nope:$LATEST")
	resp, body = tp.call("PUT", "/2015-03-31/functions/one/aliases/non-existent", map[string]string{"FunctionVersion": "1"}, nil)
	wantAPIError(t, "UpdateAlias of a missing alias", resp, body, 404, "ResourceNotFoundException", "Alias not found: "+base+"one:non-existent")
	resp, _, body = tp.invokeProbe("nope", "", nil)
	wantAPIError(t, "invoke of a missing function", resp, body, 404, "ResourceNotFoundException", "Function not found: "+base+"nope:$LATEST")
}
