package platform

import "net/http"

// APIHandler is the Lambda API's handler of a platform, set by api_link_test.go (package
// platform_test) to lambdaapi.Handler: the internal tests cannot import lambdaapi, which
// imports this package.
var APIHandler func(*Platform) http.Handler
