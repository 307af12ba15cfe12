package engine

import (
	"errors"
	"fmt"
)

// The two error classes every store and parser reports, so a caller (the
// CLI's exit status) tells them apart with errors.Is alone.
var (
	// ErrInvalid marks bad input: a record that does not validate, an
	// unknown category, a file that does not parse or does not exist. The
	// errors that carry it are *InvalidError.
	ErrInvalid = errors.New("invalid input")
	// ErrNotFound marks a lookup of something memory does not hold (a
	// run, lesson, trajectory or planner history id). Each store keeps its
	// own sentinel (run.ErrNotFound, ...), made with NotFound so it wraps
	// this one.
	ErrNotFound = errors.New("not found")
)

// InvalidError is bad input, naming what was invalid and why. Every store
// and parser returns it (possibly wrapped) for input it refuses;
// errors.Is(err, ErrInvalid) holds for it.
//
// Error() is "invalid <What>: <Problem>", or "<Problem>" when What is
// empty; Err, when set, is a cause that is wrapped and appended ("…: <Err>",
// or just "<Err>" when there is neither What nor Problem).
type InvalidError struct {
	What    string // what kind of thing was invalid: "lesson", "run", "context request"
	Problem string // what is wrong with it
	Err     error  // the cause, if any
}

func (e *InvalidError) Error() string {
	msg := e.Problem
	if e.Err != nil {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	if e.What == "" {
		return msg
	}
	return "invalid " + e.What + ": " + msg
}

// Unwrap returns the cause.
func (e *InvalidError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// Invalid returns an *InvalidError: "invalid <what>: <problem>".
func Invalid(what, problem string) error {
	return &InvalidError{What: what, Problem: problem}
}

// Invalidf is Invalid with a formatted problem. A %w verb wraps its
// operand as the cause.
func Invalidf(what, format string, args ...any) error {
	return &InvalidError{What: what, Err: fmt.Errorf(format, args...)}
}

// MarkInvalid marks err as bad input without changing its message: a file
// that does not exist, a flag the caller got wrong. It returns nil for nil.
func MarkInvalid(err error) error {
	if err == nil {
		return nil
	}
	return &InvalidError{Err: err}
}

// IsInvalid reports whether err is (or wraps) bad input.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }

// NotFound returns an error with message msg that wraps ErrNotFound: the
// way a store declares its own not-found sentinel,
//
//	var ErrNotFound = engine.NotFound("no such run")
//
// so callers can test for either the store's sentinel or ErrNotFound.
func NotFound(msg string) error { return &notFoundError{msg} }

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string        { return e.msg }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }
