package check

import (
	"strings"
	"testing"

	"github.com/engine-dev/engine/engine"
)

// The page checks every store shares: fingerprints, what a memory was
// checked against, and stale marks.
func TestPageChecks(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
	}{
		{"empty fingerprint", Fingerprint("page", ""), ""},
		{"fingerprint", Fingerprint("page", "0123456789abcdef"), ""},
		{"too long", Fingerprint("page", "0123456789abcdef0"), "not a fingerprint"},
		{"upper case", Fingerprint("page", "ABCD"), "not a fingerprint"},
		{"checked", Checked(engine.Checked{Path: "/search", Fingerprint: "a1", Page: "b2"}, 100), ""},
		{"checked path", Checked(engine.Checked{Path: "/\x00"}, 100), "checked.path"},
		{"checked page", Checked(engine.Checked{Page: "zz"}, 100), "checked.page"},
		{"stale", Stale(engine.Stale{Run: "r1", Reason: "gone"}, false), ""},
		{"stale no reason", Stale(engine.Stale{Run: "r1", Reason: " "}, false), "stale.reason is empty"},
		{"stale step", Stale(engine.Stale{Reason: "gone"}, true), "stale.step 0"},
		{"stale step given", Stale(engine.Stale{Step: 2, Reason: "gone"}, true), ""},
	} {
		if c.want == "" && c.got != "" || c.want != "" && !strings.Contains(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
