package shared

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
	return status.Error(codes.Unknown, err.Error())
}

// CallError is a failed call as the host sees it: the RPC, the gRPC code,
// and the plugin's message. The host wraps it with the plugin's name.
type CallError struct {
	Method  string
	Code    codes.Code
	Message string
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
	return &CallError{Method: method, Code: st.Code(), Message: st.Message()}
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
	return errors.As(err, &ce) && ce.Code == codes.Unavailable
}
