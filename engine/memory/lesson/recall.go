package lesson

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Tier1 returns the lessons for every system prompt: trusted tool_fallback
// and best_practice lessons bound to no site, most used first, seeds before
// learned at equal use, at most Options.Tier1Cap. It reads only those
// lessons, from an index kept in that order that carries their records;
// the index holds no candidate but those stored before trust levels, which
// are skipped.
func (s *Store) Tier1(ctx context.Context) ([]Lesson, error) {
	var out []Lesson
	var dmg damage
	err := s.db.View(ctx, func(r kv.Reader) error {
		out, dmg = make([]Lesson, 0, s.opts.Tier1Cap), damage{}
		return r.Scan(keyspace.Tier1Prefix(), kv.ScanOptions{}, func(k, v []byte) error {
			out = append(out, Lesson{}) // decoded in place: no copy of each lesson
			l := &out[len(out)-1]
			if err := decodeInto(v, keyspace.LastPart(k), l); err != nil {
				out = out[:len(out)-1]
				return dmg.skip(k, err)
			}
			if l.Tier() != 1 {
				out = out[:len(out)-1] // stored before trust levels, and not proven
				return nil
			}
			return full(len(out), s.opts.Tier1Cap)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: tier 1: %w", err)
	}
	s.reportDamage("tier1", &dmg)
	s.opts.Events.Emit(event.Tier1Loaded, map[string]any{"count": len(out), "lessons": texts(out)})
	return out, nil
}

// Verb returns the command name a lesson's failed_command is compared with:
// the first word of a command line, lower-cased, after any wrapper such as
// "playwright-cli" ("playwright-cli fill e37 x" → "fill").
func Verb(command string) string {
	f := strings.Fields(strings.ToLower(command))
	for len(f) > 1 && isWrapper(f[0]) {
		f = f[1:]
	}
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// isWrapper reports whether a command line's word w runs the command rather
// than being it ("npx", "playwright-cli").
func isWrapper(w string) bool {
	return w == "npx" || strings.Contains(w, "playwright") || strings.HasSuffix(w, "-cli")
}

// contender is an entry a scanning error recall scored above 0 (a
// contender for the answer), with its site and score. ("Candidate" is a
// trust level.)
type contender struct {
	m     matchEntry
	site  string
	score int
}

// RecallError is Trigger A: the lessons that may help after command failed
// with errText on host ("" when unknown), best match first, at most
// Options.MaxRecall. A lesson matches when its failed_command is the
// command's verb or its error_pattern occurs in errText (both compared
// case-insensitively; a pattern's placeholders match the values they
// replaced, see ErrorPattern). The score (errorScore, score.go) weighs the
// error_pattern found most, then the failed_command equal, then being bound
// to this site; ties go to the more used, more helpful, more recently used
// lesson (rankMatch). Lessons bound to another site never match.
//
// Only the entries filed under the verb, or under no command, in the
// global range and the host's site range are contenders. They are read
// from the sites' compiled recall indexes (index.go): a warm recall reads
// the two sites' generation tokens and the index entries of the lessons
// it returns, and decodes only those. A recall is not a use: it changes
// nothing. Stale lessons are left out of the answer (see fresh), not of
// the recall's event.
func (s *Store) RecallError(ctx context.Context, command, errText, host string) ([]Lesson, error) {
	out, err := s.recallOnError(ctx, command, errText, host, false)
	if err != nil {
		return nil, err
	}
	s.opts.Events.Emit(event.ErrorRecall, map[string]any{
		"command": command, "error_snippet": snippet(errText, 200), "matched": len(out), "lessons": texts(out),
	})
	return fresh(out), nil
}

// recallOnError is RecallError without its event; with hitsOnly it returns
// only the lessons whose pattern the error holds (see recallError).
func (s *Store) recallOnError(ctx context.Context, command, errText, host string, hitsOnly bool) ([]Lesson, error) {
	verb := Verb(command)
	et := newErrorText(errText) // as learning reads errors
	if host != "" {
		h, err := domain.Host(host)
		if err != nil {
			return nil, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
		}
		host = h
	}
	sites := errorSites(host)
	var out []Lesson
	var dmg damage
	err := recall(ctx, s.db, &dmg, func(r kv.Reader) error {
		var err error
		out, err = s.recallError(r, sites, verb, et, host, hitsOnly, &dmg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: recall on error: %w", err)
	}
	s.reportDamage("recall_error", &dmg)
	return out, nil
}

// errorSites are the sites whose entries error recall reads for host (a
// checked host, or ""): the global range, and host's site.
func errorSites(host string) []string {
	sites := []string{keyspace.Global}
	if host != "" && domain.Site(host) != keyspace.Global {
		sites = append(sites, domain.Site(host))
	}
	return sites
}

// scanError is error recall by scanning the index ranges of the verb and
// of no command in each of sites: what a recall does for a site written
// before generation tokens, and the oracle the compiled index is tested
// against.
func (s *Store) scanError(r kv.Reader, sites, cmds []string, et *errorText, host string, dmg *damage) ([]Lesson, error) {
	var contenders []contender
	for _, site := range sites {
		for _, cmd := range cmds {
			err := r.Scan(keyspace.LessonsByCommand(site, cmd), kv.ScanOptions{}, func(k, v []byte) error {
				id := keyspace.LastPart(k)
				use, ok := useFromKey(k)
				m, ok2 := decodeMatch(id, use, v)
				if !ok || !ok2 {
					return dmg.skip(k, errBadEntry)
				}
				if sc := errorScore(&m, cmd != "", et, host); sc > 0 {
					contenders = append(contenders, contender{m, site, sc})
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	slices.SortFunc(contenders, func(a, b contender) int { return cmp.Or(cmp.Compare(b.score, a.score), rankMatch(&a.m, &b.m)) })
	out := make([]Lesson, 0, min(len(contenders), s.opts.MaxRecall))
	for _, c := range contenders {
		if len(out) == s.opts.MaxRecall {
			break
		}
		l, err := readRecord(r, c.site, c.m.id)
		if err != nil {
			if err := dmg.skip(keyspace.Lesson(c.site, c.m.id), err); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, *l)
	}
	return out, nil
}

// readRecord reads and decodes the record of lesson id in site, for a
// recall that found the lesson in its error-recall index: a record missing
// under a live entry is damage (the index outlived the record).
func readRecord(r kv.Reader, site, id string) (*Lesson, error) {
	v, err := r.Get(keyspace.Lesson(site, id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, fmt.Errorf("lesson %s: %w: an index entry without its record", id, errDamaged)
	}
	if err != nil {
		return nil, fmt.Errorf("lesson %s: read record: %w", id, err)
	}
	return decode(v, id)
}

// RecallDomain is Trigger B: the lessons bound to host or to a domain it is
// within (www.amazon.com gets amazon.com's), the most specific domain
// first, then the most used, at most Options.MaxRecall. It reads the
// site's compiled recall index (a warm recall reads the site's generation
// token and the returned lessons' records) and decodes only the returned
// lessons. Stale lessons are left out of the answer (see fresh), not of the
// recall's event.
func (s *Store) RecallDomain(ctx context.Context, host string) ([]Lesson, error) {
	h, err := domain.Host(host)
	if err != nil {
		return nil, engine.Invalid("lesson", fmt.Sprintf("domain: %v", err))
	}
	site := domain.Site(h)
	var out []Lesson
	var dmg damage
	err = recall(ctx, s.db, &dmg, func(r kv.Reader) error {
		var err error
		out, err = s.recallDomain(r, h, site, &dmg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lesson: recall on domain %s: %w", h, err)
	}
	s.reportDamage("recall_domain", &dmg)
	s.opts.Events.Emit(event.DomainRecall, map[string]any{"domain": host, "matched": len(out), "lessons": texts(out)})
	return fresh(out), nil
}

// scanDomain is domain recall by scanning the host index ranges: for a
// site written before generation tokens, and the compiled index's oracle.
func (s *Store) scanDomain(r kv.Reader, h, site string, dmg *damage) ([]Lesson, error) {
	var out, late []Lesson
	for _, d := range domainsOf(h, site) {
		if len(out) == s.opts.MaxRecall {
			break
		}
		err := r.Scan(keyspace.LessonsByHost(site, d), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			l, err := loadAt(r, site, keyspace.LastPart(k))
			if err != nil {
				return dmg.skip(k, err)
			}
			out, late = rankedAppend(out, late, *l)
			return full(len(out), s.opts.MaxRecall)
		})
		if err != nil {
			return nil, err
		}
	}
	return withLate(out, late, s.opts.MaxRecall), nil
}

// full ends a scan (kv.ErrStop) once n of at most max are read: right after
// the last one, so the iterator does not step past it (a scan that skips
// damaged entries cannot take a fixed Limit).
func full(n, max int) error {
	if n >= max {
		return kv.ErrStop
	}
	return nil
}

// domainsOf lists host and each parent domain down to its site, most
// specific first: a.b.amazon.com → a.b.amazon.com, b.amazon.com, amazon.com.
func domainsOf(host, site string) []string {
	out := []string{host}
	for d := host; d != site; {
		_, parent, ok := strings.Cut(d, ".")
		if !ok || len(parent) < len(site) {
			break
		}
		out = append(out, parent)
		d = parent
	}
	return out
}

func sourceOrder(s Source) int {
	if s == SourceSeed {
		return 0
	}
	return 1
}

func texts(ls []Lesson) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Lesson
	}
	return out
}

func snippet(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
