package lesson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
)

// OpAttribute is the op of a version replaced by a run's attribution
// (Attribute).
const OpAttribute = "attribute"

// Attribution is what a run adds to one lesson's counts: shown, used and
// helped (engine.Counts) by the run's steps.
type Attribution struct {
	ID string `json:"id"`
	engine.Counts
}

// attributeKeys bounds the keys one lesson's attribution reads or writes
// (its id, record and index entries, and its version), for batching.
const attributeKeys = 16

// Attribute adds each attribution's counts to its lesson, one transaction
// per batch (a store with a low op limit, etcd, takes fewer per
// transaction), keeping each lesson's previous version (OpAttribute). It
// returns how many lessons it updated: one gone meanwhile is skipped. A
// lesson used gets last_used today (it is in use: the prune by age spares
// it); one that helped is proven, so a candidate becomes trusted. The
// counts of one lesson may come in several attributions (a run on two
// hosts); they add up.
func (s *Store) Attribute(ctx context.Context, as []Attribution) (int, error) {
	for _, a := range as {
		if a.ID == "" {
			return 0, engine.Invalid("lesson attribution", "a lesson id is empty")
		}
		if err := a.Counts.Check("lesson attribution"); err != nil {
			return 0, err
		}
	}
	batch := kv.TxnItems(s.db, pruneBatch, attributeKeys)
	updated := 0
	for start := 0; start < len(as); start += batch {
		part := as[start:min(start+batch, len(as))]
		var (
			ws      []*ownWrite
			changed []*Lesson
			chs     []change
		)
		n := 0
		err := s.db.Update(ctx, func(tx kv.Txn) error {
			ws, changed, chs, n = ws[:0], changed[:0], chs[:0], 0
			for _, a := range part {
				old, err := load(tx, a.ID)
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				l := *old
				l.TriggeredDomains = slices.Clone(old.TriggeredDomains)
				l.Counts.Add(a.Counts)
				if a.Used > 0 {
					l.LastUsed = s.today()
				}
				var ch change
				if l.Trust == Candidate && proven(&l) {
					l.Trust = Trusted
					ch.trusted = "helped a successful run"
				}
				if err := s.keep(tx, OpAttribute, old); err != nil {
					return err
				}
				var w *ownWrite
				if err := putOwn(tx, old, &l, &w); err != nil {
					return err
				}
				ws, changed, chs = append(ws, w), append(changed, &l), append(chs, ch)
				n++
			}
			return nil
		})
		if err != nil {
			return updated, fmt.Errorf("lesson: attribute %d lessons: %w", len(part), err)
		}
		for i, w := range ws {
			w.advance() // in order: each write's tokens follow the one before
			s.emitChange(changed[i], chs[i])
		}
		updated += n
	}
	return updated, nil
}

// cmpUnhelpful orders a lesson with counts (shown, helped) a before one
// with b when b is unhelpful (engine.Counts.Unhelpful) and a is not, and
// after it in the converse case; 0 otherwise. Recall ranks by it before
// use: among equally relevant lessons, one shown often that never helped
// comes last, so a tight budget cuts it first.
func cmpUnhelpful(aShown, aHelped, bShown, bHelped int) int {
	ua := engine.Counts{Shown: aShown, Helped: aHelped}.Unhelpful()
	ub := engine.Counts{Shown: bShown, Helped: bHelped}.Unhelpful()
	switch {
	case ua == ub:
		return 0
	case ua:
		return 1
	}
	return -1
}

// rankedAppend appends l to out, or to late when it is unhelpful: domain
// recall returns its lessons in index order, the unhelpful ones last
// (withLate).
func rankedAppend(out, late []Lesson, l Lesson) ([]Lesson, []Lesson) {
	if l.Unhelpful() {
		return out, append(late, l)
	}
	return append(out, l), late
}

// withLate is out followed by as many of late as fit under max.
func withLate(out, late []Lesson, max int) []Lesson {
	return append(out, late[:min(len(late), max-len(out))]...)
}

// prunableUnhelpful reports whether l is pruned for its counters: written
// by a program (learned, imported, api: never a seed or a person's
// lesson), shown engine.PruneUnhelpfulAfter times and never helped.
func prunableUnhelpful(l *Lesson) bool {
	return l.Source != SourceSeed && l.Source != SourceManual && l.Provenance.Source != engine.SourceManual &&
		l.Counts.PrunableUnhelpful()
}

// unhelpfulDay is the day a lesson pruned for its counters is filed under
// in the due index: before every cutoff, so the next prune removes it.
const unhelpfulDay = "0000-00-00"

// dueDay is the day l is filed under in the due index.
func dueDay(l *Lesson) string {
	if prunableUnhelpful(l) {
		return unhelpfulDay
	}
	return l.LastUsed
}

// Recovery is what a lesson tells the agent to do: the verbs of the
// action vocabulary (engine.ActionKinds) its text asks for, and the
// element or key names it gives (quoted, or capitalised words not
// starting a sentence: "press Escape", "click \"Accept cookies\"").
// A verb in an opening condition ("If fill fails, …") or after a
// negation ("Avoid clicking …", "don't click") is not asked for.
type Recovery struct {
	Verbs []engine.ActionKind
	Names []string
}

// RecoveryOf extracts the recovery from a lesson's text.
func RecoveryOf(text string) Recovery {
	var r Recovery
	for _, sentence := range sentences(text) {
		body := sentence
		if w := firstWord(sentence); w == "if" || w == "when" || w == "after" || w == "once" {
			if _, rest, ok := strings.Cut(sentence, ","); ok {
				body = rest // the condition names the failure, not the recovery
			}
		}
		words := splitWords(body)
		for i, w := range words {
			v, ok := verbOf(strings.ToLower(w.text))
			if !ok || negated(words, i) || slices.Contains(r.Verbs, v) {
				continue
			}
			r.Verbs = append(r.Verbs, v)
		}
	}
	for _, n := range names(text) {
		if !slices.ContainsFunc(r.Names, func(m string) bool { return strings.EqualFold(m, n) }) {
			r.Names = append(r.Names, n)
		}
	}
	return r
}

// UsedBy reports whether an action (its kind, its element's accessible
// name, and its value: the key pressed) followed the lesson whose text is
// given: its element or key is one the lesson names, or its verb is one
// the lesson asks for (a key press only when the key is the one named,
// if the lesson names any).
func UsedBy(text string, kind engine.ActionKind, name, value string) bool {
	return RecoveryOf(text).FollowedBy(kind, name, value)
}

// FollowedBy is UsedBy for the lesson whose recovery r is (read once per
// lesson: a run checks every step against the lessons it was shown).
func (r Recovery) FollowedBy(kind engine.ActionKind, name, value string) bool {
	named := func(s string) bool {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) < 3 {
			return false
		}
		return slices.ContainsFunc(r.Names, func(n string) bool {
			// The name, or a name it starts with ("Accept" for "Accept cookies").
			return strings.EqualFold(n, s) || (len(n) >= 3 && len(s) > len(n) && strings.EqualFold(s[:len(n)], n) && s[len(n)] == ' ')
		})
	}
	if named(name) || (kind == engine.ActPress && named(value)) {
		return true
	}
	if !slices.Contains(r.Verbs, kind) {
		return false
	}
	if kind == engine.ActPress && len(r.Names) > 0 {
		return named(value)
	}
	return true
}

// word is a word of a text and whether it starts a sentence.
type word struct {
	text  string
	first bool
}

// sentences splits text at ". ", "! ", "? " and "; ".
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if strings.IndexByte(".!?;", text[i]) >= 0 && (i+1 == len(text) || text[i+1] == ' ') {
			out = append(out, text[start:i])
			start = i + 1
		}
	}
	return append(out, text[start:])
}

func firstWord(s string) string {
	ws := splitWords(s)
	if len(ws) == 0 {
		return ""
	}
	return strings.ToLower(ws[0].text)
}

// splitWords splits s into words of letters and apostrophes.
func splitWords(s string) []word {
	var out []word
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, word{text: cur.String(), first: len(out) == 0})
			cur.Reset()
		}
	}
	for _, c := range s {
		if unicode.IsLetter(c) || c == '\'' || c == '’' {
			cur.WriteRune(c)
			continue
		}
		flush()
	}
	flush()
	return out
}

// verbOf returns the action kind w is a form of ("click", "clicks",
// "clicked", "clicking"; "type", "typing").
func verbOf(w string) (engine.ActionKind, bool) {
	for _, k := range engine.ActionKinds {
		v := string(k)
		stem := strings.TrimSuffix(v, "e")
		for _, f := range []string{v, v + "s", v + "es", v + "ed", v + "d", v + "ing", stem + "ing", stem + "ed"} {
			if w == f {
				return k, true
			}
		}
	}
	return "", false
}

// negated reports whether words[i] follows a negation: avoid, never, not,
// don't, do not, instead of, without.
func negated(words []word, i int) bool {
	prev := func(k int) string {
		if i-k < 0 {
			return ""
		}
		return strings.ToLower(strings.ReplaceAll(words[i-k].text, "’", "'"))
	}
	switch prev(1) {
	case "avoid", "never", "not", "don't", "dont", "without", "stop":
		return true
	case "of":
		return prev(2) == "instead"
	}
	return false
}

// names returns the quoted strings of text and its runs of capitalised
// words that do not start a sentence ("press Escape", "the Accept
// Cookies button").
func names(text string) []string {
	var out []string
	for _, q := range [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}} {
		rest := text
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			// An apostrophe inside a word (don't) opens no quote.
			if q[0] == "'" && i > 0 && unicode.IsLetter(rune(rest[i-1])) {
				rest = rest[i+1:]
				continue
			}
			rest = rest[i+len(q[0]):]
			j := strings.Index(rest, q[1])
			if j < 0 {
				break
			}
			if n := strings.TrimSpace(rest[:j]); n != "" {
				out = append(out, n)
			}
			rest = rest[j+len(q[1]):]
		}
	}
	for _, sentence := range sentences(text) {
		var run []string
		flush := func() {
			if len(run) > 0 {
				out = append(out, strings.Join(run, " "))
				run = nil
			}
		}
		for _, w := range splitWords(sentence) {
			r := []rune(w.text)
			if !w.first && unicode.IsUpper(r[0]) {
				run = append(run, w.text)
				continue
			}
			flush()
		}
		flush()
	}
	return out
}
