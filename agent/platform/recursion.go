package platform

// Recursive loop detection (PutFunctionRecursionConfig, GetFunctionRecursionConfig). Lambda
// stops a function caught in a loop through SQS, SNS or S3 after about 16 invocations unless
// RecursiveLoop is Allow. The platform keeps the setting (function.json) and shows it, but it
// has no SQS, SNS or S3 to loop through, so it never stops a loop: docs/platform.md says so.

const (
	recursiveLoopTerminate = "Terminate" // Lambda's default
	recursiveLoopAllow     = "Allow"
)

// PutFunctionRecursionConfig sets the function's RecursiveLoop (Terminate or Allow).
func (p *Platform) PutFunctionRecursionConfig(key fnKey, loop string) (string, error) {
	if loop != recursiveLoopTerminate && loop != recursiveLoopAllow {
		return "", errValidation(loop, "recursiveLoop", "Member must satisfy enum value set: [Terminate, Allow]")
	}
	_, err := p.replace(key, func(next *Function) error {
		next.RecursiveLoop = loop
		if loop == recursiveLoopTerminate {
			next.RecursiveLoop = "" // the default, as function.json writes it
		}
		return nil
	})
	return loop, err
}

// GetFunctionRecursionConfig is the function's RecursiveLoop (Terminate unless set).
func (p *Platform) GetFunctionRecursionConfig(key fnKey) (string, error) {
	f, err := p.function(key)
	if err != nil {
		return "", err
	}
	if f.RecursiveLoop == "" {
		return recursiveLoopTerminate, nil
	}
	return f.RecursiveLoop, nil
}
