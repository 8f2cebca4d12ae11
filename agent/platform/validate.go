package platform

import (
	"regexp"
	"strings"
)

// Checks of Lambda's API model on request fields other than names (names.go): a value outside
// the model fails before the service sees the request, with AWS's ValidationException and its
// wording (recorded in tests/conformance/replay/data/test_lambda_api.snapshot.json).

// rolePattern is Role's pattern in CreateFunction and UpdateFunctionConfiguration.
const rolePattern = `arn:(aws[a-zA-Z-]*)?:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+`

var roleRE = wholeMatch(rolePattern)

// architectureEnum is Lambda's Architecture enum as AWS's messages write it.
const architectureEnum = "[x86_64, arm64]"

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
		if !inEnum(architectureEnum, a) {
			faults = append(faults, fault{value, "architectures",
				"Member must satisfy constraint: [Member must satisfy enum value set: " + architectureEnum + ", Member must not be null]"})
			break
		}
	}
	if len(faults) > 0 {
		return errValidations(faults...)
	}
	return nil
}

// checkFunctionVersionParam checks ListFunctions' FunctionVersion: ALL, or none.
func checkFunctionVersionParam(v string) error {
	if v != "" && v != "ALL" {
		return errValidation(v, "functionVersion", "Member must satisfy enum value set: [ALL]")
	}
	return nil
}

// layerRuntimeEnum is the CompatibleRuntime filter's enum of ListLayers and ListLayerVersions,
// in the order AWS's message lists it.
const layerRuntimeEnum = "[ruby3.5, ruby2.6, dotnetcore1.0, python3.7, nodejs8.10, nasa, ruby2.7, python2.7-greengrass, dotnetcore2.0, python3.8, java21, dotnet6, dotnetcore2.1, python3.9, java11, nodejs6.10, provided, dotnetcore3.1, dotnet8, java25, java17, nodejs, nodejs4.3, java8.al2, go1.x, dotnet10, nodejs20.x, go1.9, byol, nodejs10.x, provided.al2023, nodejs22.x, python3.10, java8, nodejs12.x, python3.11, nodejs24.x, nodejs8.x, python3.12, nodejs14.x, nodejs8.9, nodejs26.x, python3.13, python3.14, nodejs16.x, python3.15, provided.al2, nodejs4.3-edge, nodejs18.x, ruby3.2, python3.4, ruby3.3, ruby3.4, ruby2.5, python3.6, python2.7]"

// inEnum reports whether v is one of the values of an enum written as AWS writes it.
func inEnum(enum, v string) bool {
	for _, x := range strings.Split(strings.Trim(enum, "[]"), ", ") {
		if x == v {
			return true
		}
	}
	return false
}

// checkLayerFilter checks ListLayers' and ListLayerVersions' filters against their enums.
func checkLayerFilter(f LayerFilter) error {
	if f.Runtime != "" && !inEnum(layerRuntimeEnum, f.Runtime) {
		return errValidation(f.Runtime, "compatibleRuntime", "Member must satisfy enum value set: "+layerRuntimeEnum)
	}
	if f.Architecture != "" && !inEnum(architectureEnum, f.Architecture) {
		return errValidation(f.Architecture, "compatibleArchitecture", "Member must satisfy enum value set: "+architectureEnum)
	}
	return nil
}

// layerVersionArnPattern is the pattern of a layer version ARN (a function's Layers,
// GetLayerVersionByArn's Arn).
const layerVersionArnPattern = `(arn:(aws[a-zA-Z-]*)?:lambda:(eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:\d{12}:layer:[a-zA-Z0-9-_]+:[0-9]+)|(arn:[a-zA-Z0-9-]+:lambda:::awslayer:[a-zA-Z0-9-_]+)`

// layersConstraint is the constraint a function's Layers list fails, as AWS words it.
const layersConstraint = "Member must satisfy constraint: [Member must have length less than or equal to 2048, " +
	"Member must have length greater than or equal to 1, Member must satisfy regular expression pattern: " +
	layerVersionArnPattern + ", Member must not be null]"

// checkLayerVersionNumber refuses a layer version number below 1 (AWS's message).
func checkLayerVersionNumber(v int64) error {
	if v < 1 {
		return errInvalid("Layer Version Cannot be less than 1")
	}
	return nil
}

// checkLayerCompatibility checks PublishLayerVersion's CompatibleRuntimes (Lambda's runtime
// enum, runtimes.go) and CompatibleArchitectures, reporting both faults at once as AWS does.
func checkLayerCompatibility(runtimes, archs []string) error {
	var faults []fault
	for _, r := range runtimes {
		// AWS accepts the layer enum (python3.7, java8, go1.x, provided: test_layer_compatibilities'
		// recorded publishes) but names the function enum in its message (test_layer_exceptions)
		if !inEnum(layerRuntimeEnum, r) {
			faults = append(faults, fault{"[" + strings.Join(runtimes, ", ") + "]", "compatibleRuntimes",
				"Member must satisfy enum value set: " + awsRuntimeEnum})
			break
		}
	}
	for _, a := range archs {
		if !inEnum(architectureEnum, a) {
			faults = append(faults, fault{"[" + strings.Join(archs, ", ") + "]", "compatibleArchitectures",
				"Member must satisfy constraint: [Member must satisfy enum value set: " + architectureEnum + ", Member must not be null]"})
			break
		}
	}
	if len(faults) > 0 {
		return errValidations(faults...)
	}
	return nil
}

// unqualifiedOnly refuses a qualifier, $LATEST too, on an operation on the function itself
// that AWS takes only unqualified (PutFunctionConcurrency), with AWS's message.
func unqualifiedOnly(ref funcRef) error {
	if ref.Qualifier != "" {
		return errInvalid("This operation is permitted on Lambda functions only. Aliases and versions do not support this " +
			"operation. Please specify either a function name or an unqualified function ARN.")
	}
	return nil
}

// VpcConfig is a function's VPC configuration as a request gives it. The platform runs no VPCs.
type VpcConfig struct {
	SubnetIds        []string `json:"SubnetIds"`
	SecurityGroupIds []string `json:"SecurityGroupIds"`
}

var (
	securityGroupIDRE = regexp.MustCompile(`^sg-[0-9a-zA-Z]*$`)
	subnetIDRE        = regexp.MustCompile(`^subnet-[0-9a-z]*$`)
)

// checkVpcConfig checks a VpcConfig as AWS does: ids outside the model's patterns are a
// ValidationException; then, since this platform has no security groups or subnets (it runs no
// EC2), any id is one that does not exist, with the EC2 error Lambda passes on (security
// groups first, as AWS checks them). An empty VpcConfig (no VPC) is accepted.
func checkVpcConfig(v *VpcConfig) error {
	if v == nil {
		return nil
	}
	list := func(ids []string) string { return "[" + strings.Join(ids, ", ") + "]" }
	var faults []fault
	for _, c := range []struct {
		ids          []string
		re           *regexp.Regexp
		field, regex string
	}{
		{v.SubnetIds, subnetIDRE, "vpcConfig.subnetIds", "subnet-[0-9a-z]*"},
		{v.SecurityGroupIds, securityGroupIDRE, "vpcConfig.securityGroupIds", "sg-[0-9a-zA-Z]*"},
	} {
		for _, id := range c.ids {
			if len(id) > 1024 || !c.re.MatchString(id) {
				faults = append(faults, fault{list(c.ids), c.field, "Member must satisfy constraint: [Member must have length less than or equal to 1024, " +
					"Member must have length greater than or equal to 0, Member must satisfy regular expression pattern: " + c.regex + "]"})
				break
			}
		}
	}
	if len(faults) > 0 {
		return errValidations(faults...)
	}
	if len(v.SecurityGroupIds) > 0 {
		return errInvalid("Error occurred while DescribeSecurityGroups. EC2 Error Code: InvalidGroup.NotFound. "+
			"EC2 Error Message: The security group '%s' does not exist", v.SecurityGroupIds[0])
	}
	if len(v.SubnetIds) > 0 {
		return errInvalid("Error occurred while DescribeSubnets. EC2 Error Code: InvalidSubnetID.NotFound. "+
			"EC2 Error Message: The subnet ID '%s' does not exist", v.SubnetIds[0])
	}
	return nil
}

// checkSnapStart checks a request's SnapStart.ApplyOn against its enum (the platform takes no
// snapshots: it is only checked; configshape.go's SnapStart is the type, OptimizationStatus is
// the answer's only).
func checkSnapStart(s *SnapStart) error {
	const enum = "[PublishedVersions, None]"
	if s != nil && !inEnum(enum, s.ApplyOn) {
		return errValidation(s.ApplyOn, "snapStart.applyOn", "Member must satisfy enum value set: "+enum)
	}
	return nil
}

// checkModel checks the fields of CreateFunction and UpdateFunctionConfiguration that Lambda's
// model constrains (nil: not in the request), before any check of the service (a runtime this
// platform does not run, for one), as AWS validates its model first.
func checkModel(role *string, archs []string, snap *SnapStart) error {
	if role != nil {
		if err := checkRole(*role); err != nil {
			return err
		}
	}
	if err := checkArchitectures(archs); err != nil {
		return err
	}
	return checkSnapStart(snap)
}
