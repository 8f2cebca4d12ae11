package platform

import (
	"errors"
	"net/http"
)

// apiError is an AWS-style error: botocore reads the code from X-Amzn-ErrorType.
type apiError struct {
	Status int
	Code   string
	Msg    string
	Reason string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Msg }

// awsError maps an error of the core, or of parsing a request, to the AWS error botocore
// expects for it.
func awsError(err error) *apiError {
	var (
		ae       *apiError
		notFound *notFoundError
		conflict *conflictError
		invalid  *invalidParameterError
		timeout  *errBodyTimeout
	)
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errReservedThrottled):
		return &apiError{http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", "ReservedFunctionConcurrentInvocationLimitExceeded"}
	case errors.Is(err, errThrottled):
		return &apiError{http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded.", "ConcurrentInvocationLimitExceeded"}
	case errors.As(err, &notFound):
		return &apiError{http.StatusNotFound, "ResourceNotFoundException", err.Error(), ""}
	case errors.As(err, &conflict):
		return &apiError{http.StatusConflict, "ResourceConflictException", err.Error(), ""}
	case errors.As(err, &invalid):
		return &apiError{http.StatusBadRequest, "InvalidParameterValueException", err.Error(), ""}
	case errors.As(err, &timeout):
		// botocore counts RequestTimeoutException among the transient errors it retries.
		return &apiError{http.StatusRequestTimeout, "RequestTimeoutException", err.Error(), ""}
	default:
		return &apiError{http.StatusInternalServerError, "ServiceException", err.Error(), ""}
	}
}
