package session

import (
	"fmt"
	"strings"
	"time"
)

// FullDetail is how many of the newest sessions Render shows in full.
const FullDetail = 2

// Render writes the session history as the LLM reads it, sessions newest
// first as Recent returns them: the FullDetail newest in full (outcome,
// final URL, turns, duration), older ones on one line each. It returns ""
// for no sessions. The caller adds the section heading.
func Render(sessions []Session) string {
	var b strings.Builder
	for i, s := range sessions {
		status := "succeeded"
		if !s.Success {
			status = "failed"
		}
		when := s.Timestamp.UTC().Format("2006-01-02 15:04")
		if i < FullDetail {
			fmt.Fprintf(&b, "%d. [%s] %q: %s (session %s)\n", i+1, when, s.Goal, status, s.ID)
			if s.Outcome != "" {
				fmt.Fprintf(&b, "   Outcome: %s\n", oneLine(s.Outcome))
			}
			if s.FinalURL != "" {
				fmt.Fprintf(&b, "   Final URL: %s\n", s.FinalURL)
			}
			fmt.Fprintf(&b, "   %d turns in %s\n", s.TurnsUsed, duration(s.DurationMS))
			continue
		}
		line := fmt.Sprintf("%d. [%s] %q: %s", i+1, when, s.Goal, status)
		if s.Outcome != "" {
			line += ": " + clip(oneLine(s.Outcome), 100)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	return d.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
