package platform

import "strings"

// Checks of Lambda's API model on request fields other than names (names.go): a value outside
// the model fails before the service sees the request, with AWS's ValidationException and its
// wording (recorded in tests/conformance/replay/data/test_lambda_api.snapshot.json).

// rolePattern is Role's pattern in CreateFunction and UpdateFunctionConfiguration.
const rolePattern = `arn:(aws[a-zA-Z-]*)?:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+`

var roleRE = wholeMatch(rolePattern)

// checkRole refuses a Role that is not an IAM role ARN (the local platform assumes no role,
// but a request AWS refuses is refused here too).
func checkRole(role string) error {
	if !roleRE.MatchString(role) {
		return errValidations(patternFault(role, "role", rolePattern))
	}
	return nil
}

// checkArchitectures checks Architectures against the model: at most one, each x86_64 or
// arm64 ("[x86_64, arm64]" is how AWS's message writes the list).
func checkArchitectures(archs []string) error {
	if archs == nil {
		return nil
	}
	value := "[" + strings.Join(archs, ", ") + "]"
	var faults []fault
	if len(archs) > 1 {
		faults = append(faults, fault{value, "architectures", "Member must have length less than or equal to 1"})
	}
	for _, a := range archs {
		if a != "x86_64" && a != "arm64" {
			faults = append(faults, fault{value, "architectures",
				"Member must satisfy constraint: [Member must satisfy enum value set: [x86_64, arm64], Member must not be null]"})
			break
		}
	}
	if len(faults) > 0 {
		return errValidations(faults...)
	}
	return nil
}
