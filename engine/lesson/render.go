package lesson

import "strings"

// The headings the agent is shown lessons under, from the design's prompt.
const (
	Tier1Heading      = "## Lessons from experience\n\nThese are lessons learned from previous runs. Follow them."
	ErrorTipsHeading  = "Tips from previous experience:"
	DomainTipsHeading = "Tips for this site:"
)

// Render writes lessons as the agent sees them: the heading, then one
// "- " line per lesson. No lessons render as "".
func Render(heading string, ls []Lesson) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(heading)
	for _, l := range ls {
		b.WriteString("\n- ")
		b.WriteString(l.Lesson)
	}
	return b.String()
}
