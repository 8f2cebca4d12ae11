package platform

import (
	"net/http"
	"regexp"
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

var (
	regionRE    = regexp.MustCompile(`^[a-z]{2}(-gov)?-[a-z]+-\d$`)
	accountRE   = regexp.MustCompile(`^\d{12}$`)
	qualifierRE = regexp.MustCompile(`^(\$LATEST|[a-zA-Z0-9_-]{1,128})$`)
	versionRE   = regexp.MustCompile(`^[1-9][0-9]*$`)
	// AWS's pattern for FunctionName, quoted in its validation message.
	functionNamePattern = `(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?`
)

// errValidation is AWS's answer to a parameter outside its model's constraints.
func errValidation(value, field, constraint string) error {
	return &apiError{http.StatusBadRequest, "ValidationException",
		"1 validation error detected: Value '" + value + "' at '" + field + "' failed to satisfy constraint: " + constraint, ""}
}

// parseFunctionRef resolves a FunctionName and Qualifier in the region of the request. The
// checks and their answers are Lambda's: a malformed name is a ValidationException; a qualifier
// in the name that disagrees with the Qualifier parameter an InvalidParameterValueException; an
// ARN of another region a ResourceNotFoundException ("Functions from 'eu-west-1' are not
// reachable in this region ('us-east-1')"); an ARN of another account is AccessDenied.
func parseFunctionRef(raw, qualifier, region string) (funcRef, error) {
	ref := funcRef{fnKey: fnKey{Region: region}}
	bad := errValidation(raw, "functionName", "Member must satisfy regular expression pattern: "+functionNamePattern)
	if raw == "" || len(raw) > 256 {
		return ref, bad
	}
	parts := strings.Split(raw, ":")
	var inName string
	hasQualifier := false
	account, arnRegion := accountID, ""
	switch {
	case parts[0] == "arn":
		if (len(parts) != 7 && len(parts) != 8) || !strings.HasPrefix(parts[1], "aws") || parts[2] != "lambda" ||
			parts[5] != "function" || !regionRE.MatchString(parts[3]) || !accountRE.MatchString(parts[4]) {
			return ref, bad
		}
		arnRegion, account, ref.Name = parts[3], parts[4], parts[6]
		if len(parts) == 8 {
			inName, hasQualifier = parts[7], true
		}
	case len(parts) >= 3 && parts[1] == "function":
		if len(parts) > 4 || !accountRE.MatchString(parts[0]) {
			return ref, bad
		}
		account, ref.Name = parts[0], parts[2]
		if len(parts) == 4 {
			inName, hasQualifier = parts[3], true
		}
	case len(parts) <= 2:
		ref.Name = parts[0]
		if len(parts) == 2 {
			inName, hasQualifier = parts[1], true
		}
	default:
		return ref, bad
	}
	if !functionNameRE.MatchString(ref.Name) || (hasQualifier && !qualifierRE.MatchString(inName)) {
		return ref, bad
	}
	if qualifier != "" && !qualifierRE.MatchString(qualifier) {
		return ref, errValidation(qualifier, "qualifier", "Member must satisfy regular expression pattern: (|[a-zA-Z0-9$_-]+)")
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
