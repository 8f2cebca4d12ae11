package platform

import (
	"errors"
	"strings"
	"testing"
)

// The answers below are AWS's, as recorded in tests/conformance/replay/data/
// test_lambda_api.snapshot.json (TestLambdaFunction::test_function_name_and_qualifier_validation,
// test_function_arns, test_create_lambda_exceptions).

func TestFunctionNamePatternGroups(t *testing.T) {
	for _, re := range []string{functionNamePattern, createFunctionNamePattern} {
		m := wholeMatch(re).FindStringSubmatch("arn:aws:lambda:us-east-1:123456789012:function:fn:7")
		if m == nil || m[reRegion] != "us-east-1:" || m[reAccount] != "123456789012:" || m[reName] != "fn" || m[reQualifier] != "7" {
			t.Errorf("%s: submatches %q", re, m)
		}
	}
}

func apiErr(t *testing.T, err error) *apiError {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	return awsError(err)
}

func TestFunctionRefValidationIsAWSs(t *testing.T) {
	arn := "arn:aws:lambda:us-east-1:000000000000:function:"
	a170 := strings.Repeat("a", 170)
	pattern := "Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_\\.]+)(:(\\$LATEST(\\.PUBLISHED)?|[a-zA-Z0-9-_]+))?"
	for _, c := range []struct{ name, qualifier, code, msg string }{
		{"my-function!", "", "ValidationException", "1 validation error detected: Value 'my-function!' at 'functionName' failed to satisfy constraint: " + pattern},
		{"invalid-account:function:my-function", "", "ValidationException", pattern},
		{"arn:aws:lambda::000000000000:function:f", "", "ValidationException", pattern},
		{arn + "f:$LATES", "", "ValidationException", pattern},
		{"function:f:$LATEST:extra", "", "ValidationException", pattern},
		{"f", "invalid!", "ValidationException", "Value 'invalid!' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: \\$(LATEST(\\.PUBLISHED)?)|[a-zA-Z0-9-_$]+"},
		{"f", strings.Repeat("a", 129), "ValidationException", "1 validation error detected: Value '" + strings.Repeat("a", 129) + "' at 'qualifier' failed to satisfy constraint: Member must have length less than or equal to 128"},
		// Both faults at once, in AWS's "N validation errors detected: …; …".
		{"arn:aws:lambda:invalid-region:000000000000:function:f-" + a170, strings.Repeat("a", 129), "ValidationException", "2 validation errors detected: Value 'arn:aws:lambda:invalid-region"},
		{arn + "f:$LATEST", "1", "InvalidParameterValueException", "The derived qualifier from the function name does not match the specified qualifier."},
	} {
		_, err := parseFunctionRef(c.name, c.qualifier, "us-east-1")
		if e := apiErr(t, err); e.Code != c.code || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q %q: %s %s, want %s %s", c.name, c.qualifier, e.Code, e.Msg, c.code, c.msg)
		}
	}
	// Names the pattern allows but no function has are looked up (and not found), as AWS does.
	for name, want := range map[string]string{
		strings.Repeat("a", 65):                          strings.Repeat("a", 65),
		"arn:aws:lambda:us-east-1:000000000000:function": "function",
		"my.function": "my.function",
		"arn:aws:lambda:us-east-1:000000000000:function:f:$latest": "", // "$latest" is not a qualifier in a name
	} {
		ref, err := parseFunctionRef(name, "", "us-east-1")
		if want == "" {
			if err == nil {
				t.Errorf("%q: accepted", name)
			}
			continue
		}
		if err != nil || ref.Name != want {
			t.Errorf("%q: %+v %v, want name %q", name, ref, err, want)
		}
	}
	if ref, err := parseFunctionRef("f", "$latest", "us-east-1"); err != nil || ref.Qualifier != "$latest" {
		t.Errorf("Qualifier $latest: %+v %v (AWS looks it up)", ref, err)
	}
}

func TestCreateFunctionNameValidationIsAWSs(t *testing.T) {
	pattern := "Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:lambda:)?((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1}:)?(\\d{12}:)?(function:)?([a-zA-Z0-9-_]+)(:(\\$LATEST|[a-zA-Z0-9-_]+))?"
	long := "arn:aws:lambda:invalid-region:000000000000:function:my-function" + strings.Repeat("a", 170)
	for _, c := range []struct{ name, code, msg string }{
		{"invalid:function:name", "ValidationException", "1 validation error detected: Value 'invalid:function:name' at 'functionName' failed to satisfy constraint: " + pattern},
		{"my.function", "ValidationException", pattern},
		{"my-function:" + strings.Repeat("a", 129), "ValidationException", "1 validation error detected: Value 'my-function:" + strings.Repeat("a", 129) + "' at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 140"},
		{long, "ValidationException", "2 validation errors detected: Value '" + long + "' at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 140; Value '" + long + "' at 'functionName' failed to satisfy constraint: " + pattern},
		{strings.Repeat("a", 65), "InvalidParameterValueException", "1 validation error detected: Value '" + strings.Repeat("a", 65) + "' at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 64"},
		{"arn:aws:lambda:us-east-1:000000000000:function:f:$latest", "ValidationException", pattern},
	} {
		_, err := parseCreateFunctionName(c.name, "us-east-1")
		if e := apiErr(t, err); e.Code != c.code || e.Msg != c.msg && !strings.HasSuffix(c.msg, pattern) || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: %s %s, want %s %s", c.name, e.Code, e.Msg, c.code, c.msg)
		}
	}
	for raw, want := range map[string]string{"f": "f", "arn:aws:lambda:us-east-1:000000000000:function:g": "g", "000000000000:function:h": "h"} {
		if name, err := parseCreateFunctionName(raw, "us-east-1"); err != nil || name != want {
			t.Errorf("%q: %q %v, want %q", raw, name, err, want)
		}
	}
}

func TestRoleAndArchitecturesFollowTheModel(t *testing.T) {
	e := apiErr(t, checkRole("r1"))
	want := "1 validation error detected: Value 'r1' at 'role' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*)?:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+"
	if e.Code != "ValidationException" || e.Msg != want {
		t.Errorf("role r1: %s %s", e.Code, e.Msg)
	}
	if err := checkRole("arn:aws:iam::123456789012:role/service-role/x"); err != nil {
		t.Errorf("a role ARN: %v", err)
	}
	e = apiErr(t, checkArchitectures([]string{"x86_64", "arm64"}))
	if e.Msg != "1 validation error detected: Value '[x86_64, arm64]' at 'architectures' failed to satisfy constraint: Member must have length less than or equal to 1" {
		t.Errorf("two architectures: %s", e.Msg)
	}
	e = apiErr(t, checkArchitectures([]string{"X86_64"}))
	if e.Msg != "1 validation error detected: Value '[X86_64]' at 'architectures' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [x86_64, arm64], Member must not be null]" {
		t.Errorf("X86_64: %s", e.Msg)
	}
	if checkArchitectures([]string{"arm64"}) != nil || checkArchitectures(nil) != nil {
		t.Error("valid architectures refused")
	}
}

func TestDeleteFunctionQualifiersInAWSsOrder(t *testing.T) {
	tp := startPlatform(t, Config{})
	p := tp.Platform
	key := fnKey{defaultRegion, "gone"}
	for q, want := range map[string]string{
		"$LATEST": "$LATEST version cannot be deleted without deleting the function.",
		"alias":   "Deletion of aliases is not currently supported.",
		"$latest": "Function not found: " + key.arn(),
		"3":       "Function not found: " + key.arn(),
	} {
		err := p.DeleteFunction(funcRef{key, q})
		if err == nil || err.Error() != want {
			t.Errorf("delete %s:%s: %v, want %s", key.Name, q, err, want)
		}
	}
	var nf *notFoundError
	if err := p.DeleteFunction(funcRef{key, ""}); !errors.As(err, &nf) {
		t.Errorf("delete a missing function: %v", err)
	}
	// A version of an existing function that does not exist is deleted already (twice).
	tp.create("here", nil)
	for range 2 {
		if err := p.DeleteFunction(funcRef{fnKey{defaultRegion, "here"}, "1233"}); err != nil {
			t.Errorf("delete a missing version: %v", err)
		}
	}
}
