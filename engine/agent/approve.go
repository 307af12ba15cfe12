package agent

import (
	"regexp"
	"strings"

	"github.com/engine-dev/engine/engine"
)

var (
	buyRe    = regexp.MustCompile(`(?i)\b(buy|purchase|pay|checkout|check out|place (the )?order|order now|confirm (the )?order|add payment|subscribe)\b`)
	deleteRe = regexp.MustCompile(`(?i)\b(delete|remove|erase|destroy|cancel (my )?(account|subscription)|close (my )?account)\b`)
	// personalRe: the names of fields that hold personal data (payment,
	// identity, contact), each a word's start ("Cardholder", not
	// "Discard"). A login credential (password, passcode, PIN) is not
	// among them: typing it is how a login works, whatever the field is
	// called, and the run's Redactor keeps it out of every record.
	personalRe = regexp.MustCompile(`(?i)\b(card|credit|cvv|cvc|iban|social security|ssn|passport|phone|e-?mail|address|birth|date of birth|postcode|zip)`)
	submitRe   = regexp.MustCompile(`(?i)\b(submit|send|save|continue|sign ?up|register|confirm)\b`)
)

// sensitive says why an action needs approval ("" when it does not):
// actions that buy, pay, delete, or submit personal data. It judges by the
// target's accessible name, so it works on any site without configuration,
// and never by the value typed: a search for "reset password help" enters
// no personal data.
func sensitive(kind engine.ActionKind, el engine.Element, value string) string {
	name := el.Name
	switch kind {
	case engine.ActClick, engine.ActPress:
		if kind == engine.ActPress && !strings.EqualFold(value, "Enter") {
			return ""
		}
		switch {
		case buyRe.MatchString(name):
			return "buys or pays"
		case deleteRe.MatchString(name):
			return "deletes something"
		case submitRe.MatchString(name) && personalRe.MatchString(name):
			return "submits personal data"
		}
	case engine.ActFill, engine.ActType, engine.ActSelect:
		if personalRe.MatchString(name) && value != "" {
			return "enters personal data"
		}
	}
	return ""
}
