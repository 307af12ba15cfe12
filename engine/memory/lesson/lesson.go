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

// Source says where a lesson came from (engine.Source: seed, manual,
// learned, imported, api). The lesson's top-level "source" field is the
// two-tier design's; it equals Provenance.Source for lessons written since
// provenance, except a seed declared by a person (manual, source seed).
type Source = engine.Source

// Lesson sources.
const (
	SourceSeed     = engine.SourceSeed
	SourceManual   = engine.SourceManual
	SourceLearned  = engine.SourceLearned
	SourceImported = engine.SourceImported
	SourceAPI      = engine.SourceAPI
)

// Trust says whether a lesson may go into every system prompt (Tier 1) and
// how a prompt shows it.
type Trust string

// The trust levels.
const (
	// Trusted: a seed, written by a person, approved by an operator, or
	// seen working again (see Store.Use). Only trusted lessons are Tier 1.
	Trusted Trust = "trusted"
	// Candidate: learned, imported or written by another program and not
	// yet proven; recalled in Tier 2 and shown as unverified advice.
	Candidate Trust = "candidate"
	// Quarantined: its text failed the screen; held out of every prompt
	// until approved or rejected.
	Quarantined Trust = "quarantined"
)

// Trusts lists the trust levels.
var Trusts = []Trust{Trusted, Candidate, Quarantined}

// ParseTrust returns the trust level named s, or an engine.ErrInvalid
// error listing the valid ones.
func ParseTrust(s string) (Trust, error) {
	t := Trust(strings.TrimSpace(s))
	if slices.Contains(Trusts, t) {
		return t, nil
	}
	return "", engine.Invalid("lesson", fmt.Sprintf("unknown trust %q (want one of trusted, candidate, quarantined)", s))
}

// trustOf is the trust a new lesson from src starts with: the engine's own
// and a person's lessons are trusted, everything else is a candidate.
func trustOf(src Source) Trust {
	if src == SourceSeed || src == SourceManual {
		return Trusted
	}
	return Candidate
}

// proven reports whether l has the evidence that makes a candidate
// trusted: a second use (the same failure→recovery seen on another run:
// learning counts a log once) or a successful run it helped.
func proven(l *Lesson) bool { return l.UseCount >= 2 || l.Helped >= 1 }

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
	// Shown, Used and Helped are the lesson's attribution (JSON shown,
	// used, helped): the run steps whose context showed it, those whose
	// next action followed its recovery (UsedBy), and those used ones
	// whose action worked in a successful run. UseCount is apart: it
	// counts the times the failure pattern recurred.
	engine.Counts
	// Quarantine says why the lesson is held out of every prompt (the
	// screen's reason, engine/trust/injection); "" for a lesson that may be shown.
	// A quarantined lesson is kept apart from the lessons (no index, no
	// recall, no list but its own) until approved or rejected.
	Quarantine string `json:"quarantine,omitempty"`
	// Trust is trusted, candidate or quarantined (see Trust). A record
	// written before trust levels has none; it reads as legacyTrust says.
	Trust Trust `json:"trust,omitempty"`
	// Provenance says who wrote the lesson first: how, from which run and
	// model, on which site, when, and for an import which file.
	Provenance engine.Provenance `json:"provenance,omitzero"`
	// Checked is the page a site-bound lesson was learned (or learned
	// again) on: its path and structural fingerprint (engine/memory/fingerprint).
	// Nil for a lesson bound to no site or learned before fingerprints.
	Checked *Checked `json:"checked,omitempty"`
	// Stale says the action the lesson recommends failed on its page after
	// the page changed (see MarkPages): it is left out of recall until
	// learned again. Nil for a lesson not known to be stale.
	Stale *Stale `json:"stale,omitempty"`

	// legacy marks a record decoded without a trust field: its index
	// entries were written by the shape rule (see posTier).
	legacy bool
}

// legacyTrust is the trust of a lesson stored before trust levels: seeds
// are trusted, others by the evidence rule (proven), so a lesson that
// proved itself stays in Tier 1 and one that did not leaves it.
func legacyTrust(l *Lesson) Trust {
	switch {
	case l.Quarantine != "":
		return Quarantined
	case l.Source == SourceSeed || proven(l):
		return Trusted
	}
	return Candidate
}

// Tier returns 1 for a lesson that goes into every system prompt (a
// trusted tool_fallback or best_practice lesson bound to no site), else 2.
func (l *Lesson) Tier() int {
	if l.shapeTier() == 1 && l.Trust == Trusted {
		return 1
	}
	return 2
}

// shapeTier is the tier by category and domain alone, as it was before
// trust levels.
func (l *Lesson) shapeTier() int {
	if l.Category.Tier1Eligible() && l.Domain == "" {
		return 1
	}
	return 2
}

// posTier is the tier l's index entries are filed under: Tier, except for
// a record stored before trust levels, whose entries were written by its
// shape (and stay there until it is next written), so they are found and
// replaced rather than left stale.
func (l *Lesson) posTier() int {
	if l.legacy {
		return l.shapeTier()
	}
	return l.Tier()
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
	if _, err := engine.ParseSource(string(l.Source)); err != nil {
		return engine.Invalid("lesson", fmt.Sprintf("unknown source %q (want one of seed, manual, learned, imported, api)", l.Source))
	}
	if l.Trust != "" {
		if _, err := ParseTrust(string(l.Trust)); err != nil {
			return err
		}
	}
	if err := l.Provenance.Check(); err != nil {
		return err
	}
	if l.UseCount < 0 {
		return engine.Invalid("lesson", fmt.Sprintf("use_count %d is negative", l.UseCount))
	}
	if l.Helped < 0 {
		return engine.Invalid("lesson", fmt.Sprintf("helped %d is negative", l.Helped))
	}
	if l.Shown < 0 || l.Used < 0 {
		return engine.Invalid("lesson", fmt.Sprintf("shown %d or used %d is negative", l.Shown, l.Used))
	}
	if err := checkPages(l); err != nil {
		return err
	}
	for _, d := range []struct{ name, v string }{{"created_at", l.CreatedAt}, {"last_used", l.LastUsed}} {
		if _, err := time.Parse(time.DateOnly, d.v); err != nil {
			return engine.Invalid("lesson", fmt.Sprintf("%s %q is not a date (YYYY-MM-DD)", d.name, d.v))
		}
	}
	return nil
}
