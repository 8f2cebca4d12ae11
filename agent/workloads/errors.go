package workloads

import (
	"errors"
	"fmt"
	"syscall"
)

// Error types are part of the agent's response contract: callers group failures by them.
const (
	InvalidRequest = "InvalidRequest"
	IOError        = "IOError"
	NoSpace        = "NoSpace"
	Internal       = "Internal"
)

// Error is a failure the caller should see as {"type", "message"} in the response.
type Error struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Invalid reports a bad parameter; field is the dotted path in the request, so users can find it.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Type: InvalidRequest, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// ioFailure classifies an I/O error so a full disk is distinguishable from other failures:
// ephemeral storage size is a factor users vary, and ENOSPC is its expected outcome.
func ioFailure(op string, offset int64, err error) *Error {
	typ := IOError
	if errors.Is(err, syscall.ENOSPC) {
		typ = NoSpace
	}
	if offset < 0 {
		return &Error{Type: typ, Message: fmt.Sprintf("%s: %v", op, err)}
	}
	return &Error{Type: typ, Message: fmt.Sprintf("%s at offset %d: %v", op, offset, err)}
}

// AsError turns any error into an *Error, keeping the type of errors that already have one.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Type: Internal, Message: err.Error()}
}
