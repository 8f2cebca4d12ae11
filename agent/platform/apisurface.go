package platform

import (
	"context"
	"io"
	"net/http"
	"time"
)

// The core's surface for the Lambda API (package lambdaapi, which imports this one; never the
// other way round): the names its handlers need to parse a request and call the core's
// operations, beyond the operations themselves. Each is an existing core name under an
// exported one; none gives access to the platform's state or its lock.

// Types in the signatures of the core's operations.
type (
	// FunctionKey is a function ($LATEST) in a region.
	FunctionKey = fnKey
	// FunctionRef is a function and, when the request named one, a version or alias.
	FunctionRef = funcRef
	// InvokeMeta describes how an invocation was served (Invoke's second result).
	InvokeMeta = invokeMeta
	// APIError is an AWS-style error (status, X-Amzn-ErrorType code, message, reason).
	APIError = apiError
	// CodeUpload is a code request's inline package, staged while the body was read.
	CodeUpload = upload
	// CodeLocation is a code request's package field: S3 (the inline zip is in a CodeUpload).
	CodeLocation = codeLocation
	// TimedBody is a request body read under the platform's body deadlines.
	TimedBody = timedBody
	// BodyTimeoutError is a request body that did not arrive within its deadlines.
	BodyTimeoutError = errBodyTimeout
)

// Limits of the Lambda API (limits.go, instance.go, async.go).
const (
	MaxRequestFields = maxRequestFields
	MaxPayload       = maxPayload
	MaxAsyncPayload  = maxAsyncPayload
)

// AWSError maps an error of the core, or of parsing a request, to the AWS error botocore
// expects for it.
func AWSError(err error) *APIError { return awsError(err) }

// Untyped says whether err's AWS answer has no "Type" field in its body (codesigning.go).
func Untyped(err error) bool { return untyped(err) }

// ErrInvalid is an InvalidParameterValueException (400) with the formatted message.
func ErrInvalid(format string, args ...any) error { return errInvalid(format, args...) }

// ErrValidation is a ValidationException (400): value at field fails constraint.
func ErrValidation(value, field, constraint string) error {
	return errValidation(value, field, constraint)
}

// TooLarge is a RequestEntityTooLargeException (413).
func TooLarge(msg string) error { return tooLarge(msg) }

// CheckModel checks a request's Role, Architectures and SnapStart against Lambda's model
// (validate.go); nil: not in the request.
func CheckModel(role *string, archs []string, snap *SnapStart) error {
	return checkModel(role, archs, snap)
}

// CheckLayerFilter checks ListLayers' and ListLayerVersions' filters (validate.go).
func CheckLayerFilter(f LayerFilter) error { return checkLayerFilter(f) }

// CheckFunctionVersionParam checks ListFunctions' FunctionVersion (validate.go).
func CheckFunctionVersionParam(v string) error { return checkFunctionVersionParam(v) }

// ParseCreateFunctionName checks CreateFunction's FunctionName and returns the name (names.go).
func ParseCreateFunctionName(raw, region string) (string, error) {
	return parseCreateFunctionName(raw, region)
}

// ParseFunctionRef resolves a FunctionName and Qualifier in the request's region (names.go).
func ParseFunctionRef(raw, qualifier, region string) (FunctionRef, error) {
	return parseFunctionRef(raw, qualifier, region)
}

// Key is the function the reference names, without its qualifier.
func (r funcRef) Key() FunctionKey { return r.fnKey }

// CheckVpcConfig checks a request's VpcConfig (validate.go).
func CheckVpcConfig(v *VpcConfig) error { return checkVpcConfig(v) }

// UnqualifiedOnly refuses any qualifier, $LATEST too (validate.go).
func UnqualifiedOnly(ref FunctionRef) error { return unqualifiedOnly(ref) }

// NotLatestOnly refuses a qualifier on an operation on the function itself.
func NotLatestOnly(ref FunctionRef) error { return notLatestOnly(ref) }

// CheckFunctionName checks a bare function name as CreateFunction does.
func CheckFunctionName(name string) error { return checkFunctionName(name) }

// RequestRegion is the region a request was signed for (us-east-1 without a signature).
func RequestRegion(r *http.Request) string { return requestRegion(r) }

// HostArch is the Lambda name of the architecture the platform runs functions for.
func HostArch() string { return hostArch() }

// NewRequestID is a new random request id (an Event invocation's, answered before it runs).
func NewRequestID() string { return newRevision() }

// NewTimedBody reads r's body under the platform's deadlines, set on the connection through rc.
func NewTimedBody(rc *http.ResponseController, r *http.Request) *TimedBody {
	return newTimedBody(rc, r, bodyStallTimeout, bodyTotalTimeout)
}

// Done ends the handler's reading (see done).
func (b *timedBody) Done() { b.done() }

// Drain reads and throws away what remains of a refused body (see drain).
func (b *timedBody) Drain() { b.drain() }

// ReadCodeRequest reads a code request's body: the package at zipPath into a staging file (nil
// when the body has none), the rest into v; op names the operation in the request-size message.
func (p *Platform) ReadCodeRequest(rc *http.ResponseController, r *http.Request, op string, zipPath []string, v any) (*CodeUpload, error) {
	return p.readCodeRequest(rc, r, op, zipPath, v)
}

// Discard removes the staged package unless the core adopted it (nil: nothing to remove).
func (u *upload) Discard() { u.discard() }

// CodeOf is a code request's package: the inline zip, or the S3 object loc names; field names
// the request's package field in errors.
func (p *Platform) CodeOf(ctx context.Context, zip *CodeUpload, loc CodeLocation, field string) (io.Reader, error) {
	return p.codeOf(ctx, zip, loc, field)
}

// FrontEndFor is the modelled request path an Event invocation's 202 waits (frontend.go).
func (p *Platform) FrontEndFor(req InvokeRequest) time.Duration { return p.frontEndFor(req) }

// FrontEndAfter is the modelled request path a synchronous invocation's reply waits, once it
// has returned (frontend.go).
func (p *Platform) FrontEndAfter(received time.Time, meta invokeMeta) time.Duration {
	return p.frontEndAfter(received, meta)
}

// WaitFrontEnd sleeps d, or less when the client has gone.
func WaitFrontEnd(ctx context.Context, d time.Duration) { waitFrontEnd(ctx, d) }

// NetBucketHeaders sets the X-Faascope-Net-* headers of an invocation's network buckets.
func NetBucketHeaders(h http.Header, in, out BucketLevel) { netBucketHeaders(h, in, out) }

// LogText renders an invocation's log as Lambda does: START, output, END, REPORT.
func LogText(m InvokeMeta) []byte { return logText(m) }

// Token is the token API calls must present ("" when none is required).
func (p *Platform) Token() string { return p.cfg.Token }
