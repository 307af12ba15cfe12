package agent

import (
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The approval gate judges the field by its name, not the value typed: a
// search that mentions passwords enters no personal data, and a password
// field is a login credential, whatever its name (Password or PIN), not
// personal data; payment, identity and contact fields are.
func TestSensitiveJudgesTheField(t *testing.T) {
	for _, c := range []struct {
		kind        engine.ActionKind
		name, value string
		want        string
	}{
		{engine.ActType, "Search help articles", "reset password help", ""},
		{engine.ActFill, "Password", "hunter2", ""},
		{engine.ActFill, "PIN", "4921", ""},
		{engine.ActFill, "Card number", "4111111111111111", "enters personal data"},
		{engine.ActFill, "Cardholder name", "Alice", "enters personal data"},
		{engine.ActFill, "Email address", "a@example.com", "enters personal data"},
		{engine.ActFill, "Discard reason", "duplicate", ""},
		{engine.ActClick, "Send reset password link", "", ""},
		{engine.ActClick, "Submit card details", "", "submits personal data"},
		{engine.ActClick, "Buy now", "", "buys or pays"},
	} {
		if got := sensitive(c.kind, engine.Element{Role: "textbox", Name: c.name}, c.value); got != c.want {
			t.Errorf("%s %q %q: %q, want %q", c.kind, c.name, c.value, got, c.want)
		}
	}
}
