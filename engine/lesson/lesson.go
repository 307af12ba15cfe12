// Package lesson is the two-tier lesson memory: failure→recovery patterns a
// browser agent learned, stored per site, recalled when they can help.
//
// Tier 1 (tool_fallback and best_practice lessons bound to no site) goes
// into every system prompt. Tier 2 is recalled on demand: on a command error
// (Trigger A, matched by failed_command and error_pattern) and when the run
// enters a domain (Trigger B, matched by domain including subdomains).
// Lessons enter as seeds, by hand, or from post-run learning over an action
// log; they are deduplicated on (failed_command, error_pattern), promoted to
// Tier 1 once proven across sites, and pruned when stale.
package lesson

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
)

// Category says what kind of advice a lesson is, and so its tier.
type Category string

// The four categories. Only tool_fallback and best_practice are eligible
// for Tier 1.
const (
	ToolFallback  Category = "tool_fallback"
	BestPractice  Category = "best_practice"
	ErrorRecovery Category = "error_recovery"
	SiteSpecific  Category = "site_specific"
)

// Categories lists the valid categories.
var Categories = []Category{ToolFallback, BestPractice, ErrorRecovery, SiteSpecific}

// Tier1Eligible reports whether lessons of c may enter the system prompt.
func (c Category) Tier1Eligible() bool { return c == ToolFallback || c == BestPractice }

// Source says where a lesson came from.
type Source string

// Lesson sources.
const (
	SourceSeed    Source = "seed"
	SourceLearned Source = "learned"
)

// Lesson is one failure→recovery pattern. The JSON names are the two-tier
// memory design's, so its memory.json imports as is.
type Lesson struct {
	ID               string   `json:"id"`
	Lesson           string   `json:"lesson"`
	Category         Category `json:"category"`
	FailedCommand    string   `json:"failed_command"`
	ErrorPattern     string   `json:"error_pattern"`
	Domain           string   `json:"domain"` // host the lesson is bound to; "" for every site
	UseCount         int      `json:"use_count"`
	CreatedAt        string   `json:"created_at"` // YYYY-MM-DD
	LastUsed         string   `json:"last_used"`  // YYYY-MM-DD
	Source           Source   `json:"source"`
	TriggeredDomains []string `json:"triggered_domains"`
	// Helped counts the times the agent's next action succeeded after this
	// lesson was shown to it (attribution, recorded by the agent loop).
	Helped int `json:"helped,omitempty"`
	// Quarantine says why the lesson is held out of every prompt (the
	// screen's reason, engine/screen); "" for a lesson that may be shown.
	// A quarantined lesson is kept apart from the lessons (no index, no
	// recall, no list but its own) until approved or rejected.
	Quarantine string `json:"quarantine,omitempty"`
}

// Tier returns 1 for a lesson that goes into every system prompt, else 2.
func (l *Lesson) Tier() int {
	if l.Category.Tier1Eligible() && l.Domain == "" {
		return 1
	}
	return 2
}

// ParseCategory returns the category named s, or an engine.ErrInvalid error listing
// the valid ones.
func ParseCategory(s string) (Category, error) {
	c := Category(strings.TrimSpace(s))
	if slices.Contains(Categories, c) {
		return c, nil
	}
	return "", engine.Invalid("lesson", fmt.Sprintf("unknown category %q (want one of tool_fallback, best_practice, error_recovery, site_specific)", s))
}

// validate checks l as it would be stored.
func (l *Lesson) validate() error {
	if strings.TrimSpace(l.Lesson) == "" {
		return engine.Invalid("lesson", "the lesson text is empty")
	}
	if _, err := ParseCategory(string(l.Category)); err != nil {
		return err
	}
	if l.Source != SourceSeed && l.Source != SourceLearned {
		return engine.Invalid("lesson", fmt.Sprintf("unknown source %q (want seed or learned)", l.Source))
	}
	if l.UseCount < 0 {
		return engine.Invalid("lesson", fmt.Sprintf("use_count %d is negative", l.UseCount))
	}
	if l.Helped < 0 {
		return engine.Invalid("lesson", fmt.Sprintf("helped %d is negative", l.Helped))
	}
	for _, d := range []struct{ name, v string }{{"created_at", l.CreatedAt}, {"last_used", l.LastUsed}} {
		if _, err := time.Parse(time.DateOnly, d.v); err != nil {
			return engine.Invalid("lesson", fmt.Sprintf("%s %q is not a date (YYYY-MM-DD)", d.name, d.v))
		}
	}
	return nil
}
