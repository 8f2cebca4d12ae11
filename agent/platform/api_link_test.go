package platform_test

import (
	"github.com/faascope/faascope/agent/platform"
	"github.com/faascope/faascope/agent/platform/lambdaapi"
)

// The platform's tests drive it through its Lambda API, which the core does not import
// (package lambdaapi imports the core). An external test package may import both: it hands the
// API's handler to the internal tests (APIHandler, export_test.go) before they run.
func init() { platform.APIHandler = lambdaapi.Handler }
