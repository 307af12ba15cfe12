package shared

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// toStatus turns a plugin-side error into a gRPC status error: the context's
// own errors keep their codes, anything else is Unknown with the message.
func toStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var te *TemporaryError
	if errors.As(err, &te) {
		code := codes.Unavailable
		if te.RateLimited {
			code = codes.ResourceExhausted
		}
		st, derr := status.New(code, err.Error()).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(te.RetryAfter)})
		if derr == nil {
			return st.Err()
		}
	}
	return status.Error(codes.Unknown, err.Error())
}

// TemporaryError is a plugin-side failure worth retrying: the provider
// rate-limited the call (RateLimited), failed on its side, or dropped the
// connection. It travels as a gRPC status (RESOURCE_EXHAUSTED or
// UNAVAILABLE) carrying a google.rpc.RetryInfo detail whose retry_delay is
// RetryAfter (0 when the provider did not say); the detail is what tells
// the host it is the plugin's answer, not a broken connection.
type TemporaryError struct {
	Err         error
	RateLimited bool
	RetryAfter  time.Duration
}

func (e *TemporaryError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *TemporaryError) Unwrap() error { return e.Err }

// CallError is a failed call as the host sees it: the RPC, the gRPC code,
// and the plugin's message. The host wraps it with the plugin's name.
type CallError struct {
	Method  string
	Code    codes.Code
	Message string
	// Retryable: the plugin said the call may be retried (a RetryInfo
	// detail), after RetryAfter when that is not 0.
	Retryable  bool
	RetryAfter time.Duration
}

func (e *CallError) Error() string { return e.Message }

// Is lets errors.Is match a CallError with the context's errors.
func (e *CallError) Is(target error) bool {
	switch target {
	case context.DeadlineExceeded:
		return e.Code == codes.DeadlineExceeded
	case context.Canceled:
		return e.Code == codes.Canceled
	}
	return false
}

// fromStatus turns a gRPC error seen by the host into a CallError.
func fromStatus(method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return &CallError{Method: method, Code: codes.Unknown, Message: err.Error()}
	}
	ce := &CallError{Method: method, Code: st.Code(), Message: st.Message()}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			ce.Retryable = true
			if ri.GetRetryDelay() != nil {
				ce.RetryAfter = max(ri.GetRetryDelay().AsDuration(), 0)
			}
		}
	}
	return ce
}

// IsRetryable reports whether err is a plugin's answer saying the call may
// be retried, and after how long.
func IsRetryable(err error) (time.Duration, bool) {
	var ce *CallError
	if errors.As(err, &ce) && ce.Retryable {
		return ce.RetryAfter, true
	}
	return 0, false
}

// IsUnimplemented reports whether err says the plugin does not serve the
// called service (a browser plugin asked for a model, say).
func IsUnimplemented(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Code == codes.Unimplemented
}

// IsTransport reports whether err says the connection to the plugin broke
// (the plugin process died or closed the connection).
func IsTransport(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Code == codes.Unavailable && !ce.Retryable
}
