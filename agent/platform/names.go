package platform

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Function names as the Lambda API takes them, and the region a request is addressed to.
//
// Lambda's FunctionName (in the path of every operation) is a name, "name:qualifier", a partial
// ARN "account:function:name[:qualifier]" or a full ARN
// "arn:aws:lambda:region:account:function:name[:qualifier]"; a Qualifier query parameter may
// name the version or alias too. Functions live in one region: like Lambda, the platform keeps a
// namespace per region, the region being the one the client signed its request for (SigV4's
// credential scope), so a function created through an eu-west-1 client is not found through a
// us-east-1 one. Data directories written before regions existed hold us-east-1 functions.

const defaultRegion = "us-east-1"

// fnKey identifies a function: its region and name.
type fnKey struct{ Region, Name string }

// regionalName is how the platform names a region's function or layer on disk and in its maps:
// the name itself in us-east-1 (so data written before regions loads as us-east-1's), NAME.REGION
// elsewhere (function and layer names have no dots).
func regionalName(region, name string) string {
	if region == defaultRegion {
		return name
	}
	return name + "." + region
}

func (k fnKey) arn() string {
	return "arn:aws:lambda:" + k.Region + ":" + accountID + ":function:" + k.Name
}

// qualifiedARN is the ARN of a version or alias of the function ("" qualifier: unqualified).
func (k fnKey) qualifiedARN(q string) string {
	if q == "" {
		return k.arn()
	}
	return k.arn() + ":" + q
}

// funcRef is what a request's FunctionName and Qualifier name: a function and, when given, one
// of its versions or aliases.
type funcRef struct {
	fnKey
	Qualifier string // "" when none was given
}

// AWS's patterns, as its ValidationException messages quote them (recorded in
// tests/conformance/replay/data/test_lambda_api.snapshot.json); a value is checked against the
// whole pattern, as AWS's model validation (Java's String.matches) does.
const (
	// FunctionName of the operations on an existing function (GetFunction, DeleteFunction,
	// Invoke…): names with dots and 65 or more characters pass it and are simply not found.
	functionNamePattern = `(arn:(aws[a-zA-Z-]*)?:lambda:)?((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST(\.PUBLISHED)?|[a-zA-Z0-9-_]+))?`
	// CreateFunction's FunctionName.
	createFunctionNamePattern = `(arn:(aws[a-zA-Z-]*)?:lambda:)?((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?`
	// The Qualifier parameter.
	qualifierPattern = `\$(LATEST(\.PUBLISHED)?)|[a-zA-Z0-9-_$]+`
	// The length limits AWS's messages state: CreateFunction's FunctionName ("Member must have
	// length less than or equal to 140"), a function's own name (64, CreateFunction's
	// InvalidParameterValueException) and the Qualifier parameter (128).
	maxCreateFunctionNameLen = 140
	maxFunctionNameLen       = 64
	maxQualifierLen          = 128
)

// Submatches of functionNamePattern and createFunctionNamePattern (the same groups in both;
// TestFunctionNamePatternGroups holds them): "region:", "account:", the name, the qualifier.
const (
	reRegion    = 3
	reAccount   = 9
	reName      = 11
	reQualifier = 13
)

// wholeMatch compiles an AWS pattern to match a whole value.
func wholeMatch(pattern string) *regexp.Regexp { return regexp.MustCompile(`^(?:` + pattern + `)$`) }

var (
	regionRE         = regexp.MustCompile(`^(eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d$`)
	accountRE        = regexp.MustCompile(`^\d{12}$`)
	versionRE        = regexp.MustCompile(`^[1-9][0-9]*$`)
	functionRefRE    = wholeMatch(functionNamePattern)
	createFunctionRE = wholeMatch(createFunctionNamePattern)
	qualifierParamRE = wholeMatch(qualifierPattern)
)

// fault is one failed constraint of AWS's model validation.
type fault struct{ value, field, constraint string }

func patternFault(value, field, pattern string) fault {
	return fault{value, field, "Member must satisfy regular expression pattern: " + pattern}
}

func lengthFault(value, field string, max int) fault {
	return fault{value, field, "Member must have length less than or equal to " + strconv.Itoa(max)}
}

// validationMessage is AWS's message for failed model constraints: "1 validation error
// detected: Value 'v' at 'field' failed to satisfy constraint: c", or "N validation errors
// detected: …; …" for several.
func validationMessage(faults ...fault) string {
	msgs := make([]string, len(faults))
	for i, f := range faults {
		msgs[i] = "Value '" + f.value + "' at '" + f.field + "' failed to satisfy constraint: " + f.constraint
	}
	head := "1 validation error detected: "
	if len(faults) > 1 {
		head = strconv.Itoa(len(faults)) + " validation errors detected: "
	}
	return head + strings.Join(msgs, "; ")
}

// errValidation is AWS's answer to a parameter outside its model's constraints.
func errValidation(value, field, constraint string) error {
	return errValidations(fault{value, field, constraint})
}

// errValidations is AWS's answer to several failed constraints, all reported at once.
func errValidations(faults ...fault) error {
	return &apiError{http.StatusBadRequest, "ValidationException", validationMessage(faults...), ""}
}

// parseFunctionRef resolves a FunctionName and Qualifier in the region of the request. The
// checks and their answers are Lambda's: a FunctionName outside functionNamePattern and a
// Qualifier outside qualifierPattern or longer than 128 are a ValidationException listing
// every fault; a qualifier in the name that disagrees with the Qualifier parameter an
// InvalidParameterValueException; an ARN of another region a ResourceNotFoundException
// ("Functions from 'eu-west-1' are not reachable in this region ('us-east-1')"); an ARN of
// another account is AccessDenied. A name the pattern allows but no function can have (dots,
// more than 64 characters, "function" from an ARN that ends at "function") is left to the
// lookup, which does not find it: AWS answers such names ResourceNotFoundException too.
func parseFunctionRef(raw, qualifier, region string) (funcRef, error) {
	ref := funcRef{fnKey: fnKey{Region: region}}
	var faults []fault
	m := functionRefRE.FindStringSubmatch(raw)
	if m == nil {
		faults = append(faults, patternFault(raw, "functionName", functionNamePattern))
	}
	if qualifier != "" {
		if len(qualifier) > maxQualifierLen {
			faults = append(faults, lengthFault(qualifier, "qualifier", maxQualifierLen))
		}
		if !qualifierParamRE.MatchString(qualifier) {
			faults = append(faults, patternFault(qualifier, "qualifier", qualifierPattern))
		}
	}
	if len(faults) > 0 {
		return ref, errValidations(faults...)
	}
	ref.Name = m[reName]
	inName, hasQualifier := m[reQualifier], m[reQualifier] != ""
	arnRegion := strings.TrimSuffix(m[reRegion], ":")
	account := strings.TrimSuffix(m[reAccount], ":")
	if account == "" {
		account = accountID
	}
	if hasQualifier && qualifier != "" && inName != qualifier {
		return ref, errInvalid("The derived qualifier from the function name does not match the specified qualifier.")
	}
	if arnRegion != "" && arnRegion != region {
		return ref, &apiError{http.StatusNotFound, "ResourceNotFoundException",
			"Functions from '" + arnRegion + "' are not reachable in this region ('" + region + "')", ""}
	}
	if account != accountID {
		return ref, &apiError{http.StatusForbidden, "AccessDeniedException",
			"User: arn:aws:iam::" + accountID + ":root is not authorized to perform this action on resource: " +
				fnKey{region, ref.Name}.arn() + " because no resource-based policy allows it", ""}
	}
	ref.Qualifier = qualifier
	if hasQualifier {
		ref.Qualifier = inName
	}
	return ref, nil
}

// parseCreateFunctionName checks CreateFunction's FunctionName (a name, or a partial or full
// ARN of the request's region and account, without a qualifier) and returns the function's
// name. Its model's faults (longer than 140, outside createFunctionNamePattern) are a
// ValidationException listing both; a name of more than 64 characters the service's
// InvalidParameterValueException, worded as a validation error (both as AWS answers them).
func parseCreateFunctionName(raw, region string) (string, error) {
	var faults []fault
	if len(raw) > maxCreateFunctionNameLen {
		faults = append(faults, lengthFault(raw, "functionName", maxCreateFunctionNameLen))
	}
	m := createFunctionRE.FindStringSubmatch(raw)
	if m == nil {
		faults = append(faults, patternFault(raw, "functionName", createFunctionNamePattern))
	}
	if len(faults) > 0 {
		return "", errValidations(faults...)
	}
	if m[reQualifier] != "" { // a qualified name creates nothing
		return "", errValidations(patternFault(raw, "functionName", createFunctionNamePattern))
	}
	ref, err := parseFunctionRef(raw, "", region) // the region's and account's answers
	if err != nil {
		return "", err
	}
	if len(ref.Name) > maxFunctionNameLen {
		return "", &invalidParameterError{validationMessage(lengthFault(ref.Name, "functionName", maxFunctionNameLen))}
	}
	return ref.Name, nil
}

// requestRegion is the region of a request's SigV4 credential scope
// (Credential=KEY/DATE/REGION/lambda/aws4_request, in the Authorization header or a presigned
// URL's X-Amz-Credential); an unsigned or bearer request is addressed to us-east-1.
func requestRegion(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if _, c, ok := strings.Cut(r.Header.Get("Authorization"), "Credential="); ok {
		cred, _, _ = strings.Cut(c, ",")
	}
	if parts := strings.Split(strings.TrimSpace(cred), "/"); len(parts) == 5 && regionRE.MatchString(parts[2]) {
		return parts[2]
	}
	return defaultRegion
}
