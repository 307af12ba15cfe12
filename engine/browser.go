package engine

import (
	"context"
	"errors"
	"fmt"
)

// Browser drives one page for one run. Implementations live in plugins/ and
// are reached over go-plugin; the agent loop only sees this interface.
//
// Calls are coarse on purpose (a whole snapshot in one call): every call may
// cross a process boundary.
type Browser interface {
	// Navigate loads url in the current page and waits for it to settle.
	Navigate(ctx context.Context, url string) error
	// Snapshot returns what a user could see and act on right now.
	Snapshot(ctx context.Context) (*Snapshot, error)
	// Act performs one user action. A failure the page caused (a missing or
	// covered element, a stale ref) comes back as an *ActionError so the
	// error-recall trigger can match its message.
	Act(ctx context.Context, a Action) error
	// Screenshot returns a PNG of the viewport.
	Screenshot(ctx context.Context) ([]byte, error)
	// Close releases the page and the browser behind it.
	Close() error
}

// Snapshot is one view of the page: its address, its accessibility tree with
// stable refs for everything actionable, and its visible text.
type Snapshot struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	// Elements lists every element a user could act on, in document order.
	Elements []Element `json:"elements"`
	// Tree is a readable, indented rendering of the accessibility tree with
	// refs, as an LLM would be shown it.
	Tree string `json:"tree"`
	// Text is the page's visible text, bounded in size.
	Text string `json:"text"`
	// Truncated is set when Tree or Text were cut to fit the size bound.
	Truncated bool `json:"truncated,omitempty"`
}

// Element is one actionable node of a snapshot.
type Element struct {
	Ref    string   `json:"ref"` // e.g. "e37"; valid until the next navigation
	Role   string   `json:"role"`
	Name   string   `json:"name"`
	Value  string   `json:"value,omitempty"`
	States []string `json:"states,omitempty"` // e.g. "focused", "disabled", "checked", "expanded"
}

// StateSecret is the Element state of a secret field (a password, a card
// number, an API key: redact.SecretField): the browser never reports its
// value, and the agent loop redacts whatever is typed into it.
const StateSecret = "secret"

// ActionKind names a browser action. The names are also the failed_command
// values lessons are keyed by.
type ActionKind string

// The actions every browser backend supports.
const (
	ActNavigate ActionKind = "navigate"
	ActClick    ActionKind = "click"
	ActFill     ActionKind = "fill"
	ActType     ActionKind = "type"
	ActPress    ActionKind = "press"
	ActSelect   ActionKind = "select"
	ActHover    ActionKind = "hover"
	ActScroll   ActionKind = "scroll"
	ActWait     ActionKind = "wait"
	ActBack     ActionKind = "back"
)

// ActionKinds lists the actions, the vocabulary lessons' recoveries are
// read in (lesson.RecoveryOf).
var ActionKinds = []ActionKind{ActNavigate, ActClick, ActFill, ActType, ActPress, ActSelect, ActHover, ActScroll, ActWait, ActBack}

// Action is one user action on the page.
type Action struct {
	Kind ActionKind `json:"kind"`
	// Ref is the target element's snapshot ref, where the action has one.
	Ref string `json:"ref,omitempty"`
	// Value is the text to fill or type, the key to press, the option to
	// select, the URL to navigate to, or the scroll direction ("up"/"down").
	Value string `json:"value,omitempty"`
	// Millis bounds a wait.
	Millis int `json:"millis,omitempty"`
}

// ActionError codes: a stable, machine-readable reason beside the message.
const (
	CodeStaleRef     = "stale_ref"    // the ref is from an earlier document
	CodeNotFound     = "not_found"    // no element has that ref
	CodeNotEditable  = "not_editable" // fill/type on something that is not an input
	CodeIntercepted  = "intercepted"  // another element would receive the click
	CodeNotVisible   = "not_visible"  // the element has no box to act on
	CodeNoSuchOption = "no_such_option"
	CodeTimeout      = "timeout"
	CodeNavigation   = "navigation" // the page could not be loaded
	CodeInvalid      = "invalid"    // the action itself is malformed
)

// ActionError is a failure the page caused. Message is the real reason, as a
// person would say it ("another element would receive the click: div#cookie").
type ActionError struct {
	Code    string
	Message string
}

func (e *ActionError) Error() string { return e.Message }

// AsActionError reports whether err carries an *ActionError.
func AsActionError(err error) (*ActionError, bool) {
	var ae *ActionError
	ok := errors.As(err, &ae)
	return ae, ok
}

// String renders an action the way action logs and lessons name it,
// e.g. `fill e37 "padel rackets"`.
func (a Action) String() string {
	s := string(a.Kind)
	if a.Ref != "" {
		s += " " + a.Ref
	}
	if a.Value != "" {
		s += fmt.Sprintf(" %q", a.Value)
	}
	return s
}
