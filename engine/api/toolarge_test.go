package api

import (
	"errors"
	"net/http"
	"testing"
)

// TestTooLargeSaysTheLimitOnce: a body over its limit is told with the
// limit once (not followed by net/http's "request body too large"), and
// still unwraps to the *http.MaxBytesError callers check for (statusOf
// among them: it answers 413).
func TestTooLargeSaysTheLimitOnce(t *testing.T) {
	err := tooLarge(1048576)
	if got, want := err.Error(), "request body: over 1048576 bytes (the limit of this route)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	var mb *http.MaxBytesError
	if !errors.As(err, &mb) || mb.Limit != 1048576 {
		t.Fatalf("errors.As(%v, *http.MaxBytesError) = %v, %+v", err, errors.As(err, &mb), mb)
	}
	if got := statusOf(err); got != http.StatusRequestEntityTooLarge {
		t.Errorf("statusOf = %d, want 413", got)
	}
}
