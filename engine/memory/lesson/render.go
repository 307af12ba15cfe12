package lesson

import (
	"strconv"
	"strings"
)

// The headings the agent is shown lessons under, from the design's prompt.
const (
	Tier1Heading      = "## Lessons from experience\n\nThese are lessons learned from previous runs. Follow them."
	ErrorTipsHeading  = "Tips from previous experience:"
	DomainTipsHeading = "Tips for this site:"
)

// Render writes lessons as the agent sees them: the heading, then one
// Item line per lesson. No lessons render as "".
func Render(heading string, ls []Lesson) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(heading)
	for _, l := range ls {
		b.WriteString("\n")
		b.WriteString(Item(l))
	}
	return b.String()
}

// Item is one lesson as a prompt shows it: `- "text"`, on one line, in
// double quotes with quotes, backslashes and control characters escaped.
// Memory is fenced as data: a lesson's text cannot start a line of its own,
// close its quote or pose as a heading, so text that came from a page
// reads as quoted advice, never as the prompt's own instructions (the
// system prompt says so; see agent.MemoryRule). A candidate (not yet
// proven, see Trust) is marked: `- (unverified) "text"`.
func Item(l Lesson) string {
	mark := ""
	if l.Trust == Candidate {
		mark = UnverifiedMark + " "
	}
	return "- " + mark + strconv.Quote(strings.Join(strings.Fields(l.Lesson), " "))
}

// UnverifiedMark precedes a candidate lesson's quoted text in a prompt.
const UnverifiedMark = "(unverified)"
