package trajectory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// entry is a trajectory's compact match-index record: all matching needs,
// without the steps.
type entry struct {
	ID         string
	Host       string
	Tokens     []string   // template tokens: literal words and "{n}"
	Slots      []slotSpec // slot n-1
	RecordedAt int64      // Unix seconds
	ExpiresAt  int64      // Unix seconds
	DurationMs int64
	Verified   float64 // share of verified steps
}

type slotSpec struct {
	Kind  slotKind
	Words int
}

// An index entry is stored as one line of fields separated by NUL, not as
// JSON: loading a site's index decodes every entry, and splitting a string
// costs a fraction of JSON's reflection (10k entries load in a few ms):
//
//	"t1" NUL id NUL host NUL recorded_at NUL expires_at NUL duration_ms NUL
//	verified NUL slots NUL template
//
// slots is one "<kind letter><words>" per slot, comma-separated (t2,n1,q1);
// template is the tokens joined by spaces (a token never holds a space).
const entryVersion = "t1"

var kindLetter = map[slotKind]byte{slotText: 't', slotNumber: 'n', slotQuoted: 'q'}

func (e *entry) encode() []byte {
	var b strings.Builder
	b.WriteString(entryVersion)
	for _, f := range []string{
		e.ID, e.Host, strconv.FormatInt(e.RecordedAt, 10), strconv.FormatInt(e.ExpiresAt, 10),
		strconv.FormatInt(e.DurationMs, 10), strconv.FormatFloat(e.Verified, 'g', -1, 64),
	} {
		b.WriteByte(0)
		b.WriteString(f)
	}
	b.WriteByte(0)
	for i, sl := range e.Slots {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte(kindLetter[sl.Kind])
		b.WriteString(strconv.Itoa(sl.Words))
	}
	b.WriteByte(0)
	b.WriteString(strings.Join(e.Tokens, " "))
	return []byte(b.String())
}

func decodeEntry(v []byte) (entry, error) {
	f := strings.Split(string(v), "\x00")
	if len(f) != 9 || f[0] != entryVersion {
		return entry{}, fmt.Errorf("not a %s index entry", entryVersion)
	}
	e := entry{ID: f[1], Host: f[2], Tokens: strings.Fields(f[8])}
	var err error
	ints := []*int64{&e.RecordedAt, &e.ExpiresAt, &e.DurationMs}
	for i, p := range ints {
		if *p, err = strconv.ParseInt(f[3+i], 10, 64); err != nil {
			return entry{}, err
		}
	}
	if e.Verified, err = strconv.ParseFloat(f[6], 64); err != nil {
		return entry{}, err
	}
	if f[7] != "" {
		for _, sp := range strings.Split(f[7], ",") {
			var k slotKind
			switch sp[0] {
			case 't':
				k = slotText
			case 'n':
				k = slotNumber
			case 'q':
				k = slotQuoted
			default:
				return entry{}, fmt.Errorf("slot %q has an unknown kind", sp)
			}
			w, err := strconv.Atoi(sp[1:])
			if err != nil {
				return entry{}, err
			}
			e.Slots = append(e.Slots, slotSpec{Kind: k, Words: w})
		}
	}
	return e, nil
}

func entryOf(t *Trajectory) entry {
	e := entry{
		ID: t.ID, Host: t.Domain, Tokens: strings.Fields(t.Template),
		RecordedAt: t.RecordedAt.Unix(), ExpiresAt: t.ExpiresAt.Unix(),
		DurationMs: t.DurationMs, Verified: t.VerifiedShare(),
	}
	for _, p := range t.Params {
		e.Slots = append(e.Slots, slotSpec{Kind: slotKind(p.Kind), Words: p.Words})
	}
	return e
}

// compiled is an entry ready to match: literal words as dictionary ids.
type compiled struct {
	entry
	lits   []int32      // distinct literal word ids
	host   int32        // index in siteIndex.hosts
	nb     []neighbours // per slot: the literal words around it
	nText  int
	weight int // |lits| + slots: the smallest the template's token set can be
}

// neighbours are the literal words just before and after a slot in its
// template ("" for none, or for another slot).
type neighbours struct{ prev, next string }

// siteIndex is one site's match index in memory.
type siteIndex struct {
	gen      string
	entries  []compiled
	dict     map[string]int32
	postings [][]int32 // literal id → entries holding it
	heavy    []int32   // entries that could reach the threshold on slots alone
	hosts    []string  // distinct hosts of the entries
	raw      []entry   // the entries as read, to apply this process's own writes
	// Per entry, in flat arrays so the candidate scan stays in cache:
	bounds []bound
}

// bound is what the candidate scan needs of an entry.
type bound struct {
	weight int32 // |literals| + |slots|
	slots  int32
	// need is the fewest shared literal words that let the similarity
	// pass the threshold: (need + slots) / weight > threshold (at worst
	// one word too few: a looser bound only scores one more candidate).
	need     int32
	host     int32
	expires  int64
	recorded int64
}

func (s *Store) buildIndex(gen string, ents []entry) *siteIndex {
	ix := &siteIndex{gen: gen, dict: map[string]int32{}, raw: ents}
	ix.entries = make([]compiled, 0, len(ents))
	hostIDs := map[string]int32{}
	for _, e := range ents {
		c := compiled{entry: e}
		h, ok := hostIDs[e.Host]
		if !ok {
			h = int32(len(ix.hosts))
			hostIDs[e.Host] = h
			ix.hosts = append(ix.hosts, e.Host)
		}
		c.host = h
		for _, tok := range e.Tokens {
			if isSlotToken(tok) {
				continue
			}
			id, ok := ix.dict[tok]
			if !ok {
				id = int32(len(ix.dict))
				ix.dict[tok] = id
				ix.postings = append(ix.postings, nil)
			}
			if !slices.Contains(c.lits, id) {
				c.lits = append(c.lits, id)
			}
		}
		for _, sl := range e.Slots {
			if sl.Kind == slotText {
				c.nText++
			}
		}
		c.nb = make([]neighbours, len(e.Slots))
		for i, tok := range e.Tokens {
			if !isSlotToken(tok) {
				continue
			}
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(tok, "{"), "}"))
			if err != nil || n < 1 || n > len(e.Slots) {
				continue
			}
			if i > 0 && !isSlotToken(e.Tokens[i-1]) {
				c.nb[n-1].prev = e.Tokens[i-1]
			}
			if i+1 < len(e.Tokens) && !isSlotToken(e.Tokens[i+1]) {
				c.nb[n-1].next = e.Tokens[i+1]
			}
		}
		c.weight = len(c.lits) + len(e.Slots)
		n := int32(len(ix.entries))
		need := int32(math.Floor(s.opts.Threshold*float64(c.weight)-1e-9)) + 1 - int32(len(e.Slots))
		ix.bounds = append(ix.bounds, bound{weight: int32(c.weight), slots: int32(len(e.Slots)), need: need, host: h, expires: e.ExpiresAt, recorded: e.RecordedAt})
		for _, id := range c.lits {
			ix.postings[id] = append(ix.postings[id], n)
		}
		if c.weight > 0 && float64(len(e.Slots))/float64(c.weight) >= s.opts.Threshold {
			ix.heavy = append(ix.heavy, n)
		}
		ix.entries = append(ix.entries, c)
	}
	return ix
}

// shared holds recently used match indexes, process-wide (see sitecache),
// keyed by site and threshold (the index's slot-only candidates depend on
// it): an agent visits a handful of sites at a time.
var shared = sitecache.New[*siteIndex](cacheSites)

// cacheSites bounds the index cache.
const cacheSites = 32

func (s *Store) cacheKey(site string) string {
	return site + "\x00" + strconv.FormatFloat(s.opts.Threshold, 'g', -1, 64)
}

// applyWrite updates the cached index of site after this Store wrote the
// entry of id (put, or nil for a delete) in a transaction that read the
// generation oldGen and wrote newGen. When the cache is not at oldGen
// (another writer came between), it is left alone: the next match sees the
// generation changed and reloads. Rebuilding from memory costs far less
// than reading the index back from the store.
func (s *Store) applyWrite(site, oldGen, newGen, id string, put *entry) {
	shared.Advance(s.cacheKey(site), oldGen, newGen, func(ix *siteIndex) *siteIndex {
		ents := make([]entry, 0, len(ix.raw)+1)
		for _, en := range ix.raw {
			if en.ID != id {
				ents = append(ents, en)
			}
		}
		if put != nil {
			ents = append(ents, *put)
		}
		return s.buildIndex(newGen, ents)
	})
}

// index returns the site's match index, from the cache when no write has
// changed the site since it was built.
func (s *Store) index(ctx context.Context, site string) (*siteIndex, error) {
	key := s.cacheKey(site)
	// A watched token (etcd) at the cached generation: no store read.
	if ix, ok := sitecache.Cached(shared, s.db, key, keyspace.TrajectoryGen(site)); ok {
		return ix, nil
	}
	var ix *siteIndex
	err := s.db.View(ctx, func(r kv.Reader) error {
		g, err := r.Get(keyspace.TrajectoryGen(site))
		if err != nil && !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		gen := string(g)
		if c, ok := shared.Get(key, gen); ok {
			ix = c
			return nil
		}
		var ents []entry
		err = r.Scan(keyspace.TrajectoryIndexes(site), kv.ScanOptions{}, func(k, v []byte) error {
			e, err := decodeEntry(v)
			if err != nil {
				return fmt.Errorf("decode %s: %w", k, err)
			}
			ents = append(ents, e)
			return nil
		})
		if err != nil {
			return err
		}
		ix = s.buildIndex(gen, ents)
		shared.Put(key, gen, ix)
		return nil
	})
	return ix, err
}

// Binding is one parameter of the matched template bound for the new goal.
type Binding struct {
	Param    int    `json:"param"`    // slot number: {1} is 1
	Kind     string `json:"kind"`     // text, number or quoted
	Recorded string `json:"recorded"` // the value in the recorded run
	Value    string `json:"value"`    // the value for the new goal (Recorded when unbound)
	Bound    bool   `json:"bound"`    // the new goal gave a value
}

// Match is the best recorded trajectory for a goal.
type Match struct {
	Trajectory Trajectory `json:"trajectory"`
	Similarity float64    `json:"similarity"`
	Score      float64    `json:"score"` // the weighted blend, or Similarity when unweighted
	Bindings   []Binding  `json:"bindings"`
	// Steps are the trajectory's steps with the bound values swapped in:
	// what to replay for the new goal.
	Steps []Step `json:"steps"`
	// Candidates is how many index entries were scored to find it.
	Candidates int `json:"candidates"`
}

// Match returns the best trajectory for goal on host (or URL), or nil when
// none reaches the threshold.
func (s *Store) Match(ctx context.Context, host, goal string) (*Match, error) {
	ms, err := s.Matches(ctx, host, goal, 1)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	return &ms[0], nil
}

// scored is one candidate's result.
type scored struct {
	idx        int32
	sim, score float64
	exact      bool // recorded on the very host asked about
	binds      []bind
}

type bind struct {
	bound      bool
	start, end int // byte span in the goal
	text       string
}

// Matches returns up to limit trajectories for goal on host, best first
// (limit 0 means 1).
func (s *Store) Matches(ctx context.Context, host, goal string, limit int) ([]Match, error) {
	h, err := domain.Host(host)
	if err != nil {
		return nil, engine.Invalid("trajectory", fmt.Sprintf("domain: %v", err))
	}
	if strings.TrimSpace(goal) == "" {
		return nil, engine.Invalid("trajectory", "the goal is empty")
	}
	limit = max(limit, 1)
	site := domain.Site(h)
	ix, err := s.index(ctx, site)
	if err != nil {
		return nil, fmt.Errorf("trajectory: match %s %q: %w", h, goal, err)
	}
	best, evaluated := s.rank(ix, h, goal, limit)
	var out []Match
	for _, sc := range best {
		e := &ix.entries[sc.idx]
		t, err := s.get(ctx, site, e.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted or expired since the index was read
		}
		if err == nil && t.Stale != nil {
			continue // marked stale by another process since
		}
		if err != nil {
			return nil, fmt.Errorf("trajectory: match %s %q: read %s: %w", h, goal, e.ID, err)
		}
		out = append(out, bindMatch(t, goal, sc, evaluated))
	}
	fields := map[string]any{"domain": h, "goal": goal, "candidates": evaluated, "id": ""}
	if len(out) > 0 {
		fields["id"] = out[0].Trajectory.ID
		fields["similarity"] = round(out[0].Similarity)
		fields["score"] = round(out[0].Score)
		fields["template"] = out[0].Trajectory.Template
		var bound []string
		for _, b := range out[0].Bindings {
			if b.Bound {
				bound = append(bound, fmt.Sprintf("{%d}=%s", b.Param, b.Value))
			}
		}
		fields["bindings"] = bound
	}
	s.opts.Events.Emit(EventMatched, fields)
	return out, nil
}

func round(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// accPool recycles the per-entry overlap counters of rank.
var accPool = sync.Pool{New: func() any { return new([]uint16) }}

// rank scores the candidates and returns the best limit of them.
func (s *Store) rank(ix *siteIndex, host, goal string, limit int) ([]scored, int) {
	now := s.opts.Now().Unix()
	parts := parseGoal(goal)
	ids := make([]int32, len(parts))
	var gids []int32
	for i, p := range parts {
		ids[i] = -1
		if p.kind == pWord {
			if id, ok := ix.dict[p.norm]; ok {
				ids[i] = id
				if !slices.Contains(gids, id) {
					gids = append(gids, id)
				}
			}
		}
	}
	accp := accPool.Get().(*[]uint16)
	defer accPool.Put(accp)
	if cap(*accp) < len(ix.entries) {
		*accp = make([]uint16, len(ix.entries))
	}
	acc := (*accp)[:len(ix.entries)]
	clear(acc)
	var cands []cand
	hostOK := make([]bool, len(ix.hosts))
	for i, h := range ix.hosts {
		hostOK[i] = applies(host, h)
	}
	bounds := ix.bounds
	maxAge := int64(s.opts.TTL.Seconds())
	if s.opts.MaxAge > 0 {
		maxAge = int64(s.opts.MaxAge.Seconds())
	}
	consider := func(n int32) {
		bd := &bounds[n]
		if int32(acc[n]) < bd.need || bd.weight == 0 || bd.expires <= now || now-bd.recorded > maxAge || !hostOK[bd.host] {
			return
		}
		// The upper bound of the similarity: every shared literal and
		// every slot matching.
		cands = append(cands, cand{n, float64(int32(acc[n])+bd.slots) / float64(bd.weight)})
	}
	for _, id := range gids {
		for _, n := range ix.postings[id] {
			acc[n]++
		}
	}
	const done = ^uint16(0)
	for _, id := range gids {
		for _, n := range ix.postings[id] {
			if acc[n] != done {
				consider(n)
				acc[n] = done // consider once
			}
		}
	}
	for _, n := range ix.heavy {
		if acc[n] != done {
			consider(n)
			acc[n] = done
		}
	}
	// Evaluate in falling order of the upper bound, popping from a heap:
	// usually only a few candidates are scored before the bound falls
	// below the best found.
	h := candHeap(cands)
	h.init()
	var best []scored
	sc := &scratch{}
	evaluated := 0
	for len(h) > 0 {
		c := h.pop()
		if len(best) == limit {
			worst := best[len(best)-1]
			bound := c.ub
			if s.opts.Weighted {
				bound = 0.6*c.ub + 0.4
			}
			if bound < worst.score {
				break
			}
		}
		e := &ix.entries[c.idx]
		evaluated++
		sim, binds := sc.similarity(e, parts, ids)
		if sim <= s.opts.Threshold {
			continue // a match needs more than the threshold
		}
		r := scored{idx: c.idx, sim: sim, score: sim, exact: e.Host == host, binds: binds}
		if s.opts.Weighted {
			r.score = WeightedScore(sim, time.Duration(now-e.RecordedAt)*time.Second, e.DurationMs, e.Verified)
		}
		at, _ := slices.BinarySearchFunc(best, r, func(a, b scored) int { return better(ix, a, b) })
		best = slices.Insert(best, at, r)
		if len(best) > limit {
			best = best[:limit]
		}
	}
	return best, evaluated
}

// Recency is the weighted rank's recency of a trajectory recorded age ago:
// exp(−days/14) (1 now, 0.368 at 14 days, 0.135 at 28); a future record
// counts as new.
func Recency(age time.Duration) float64 {
	days := max(age.Hours()/24, 0)
	return math.Exp(-days / RecencyDays)
}

// RecencyDays is the recency's time constant in days.
const RecencyDays = 14

// WeightedScore is the weighted rank: 0.6·similarity + 0.2·recency +
// 0.1·speed + 0.1·verification, speed = 1/(1 + duration/60 s) (0.5 when
// unknown), verification the share of verified steps.
func WeightedScore(sim float64, age time.Duration, durationMs int64, verified float64) float64 {
	speed := 0.5
	if durationMs > 0 {
		speed = 1 / (1 + float64(durationMs)/60000)
	}
	return 0.6*sim + 0.2*Recency(age) + 0.1*speed + 0.1*verified
}

// cand is a candidate entry with the upper bound of its similarity.
type cand struct {
	idx int32
	ub  float64
}

// candHeap is a max-heap of candidates by upper bound (then index).
type candHeap []cand

func (h candHeap) less(i, j int) bool {
	if h[i].ub != h[j].ub {
		return h[i].ub > h[j].ub
	}
	return h[i].idx < h[j].idx
}

func (h candHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) pop() cand {
	old := *h
	c := old[0]
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
	return c
}

// better orders a before b (returns < 0) when a ranks higher: score, then
// one recorded on the host asked about over one of a parent domain, then
// the newer recording, then the more verified, then the id.
func better(ix *siteIndex, a, b scored) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if a.exact != b.exact {
		if a.exact {
			return -1
		}
		return 1
	}
	ea, eb := &ix.entries[a.idx], &ix.entries[b.idx]
	if ea.RecordedAt != eb.RecordedAt {
		if ea.RecordedAt > eb.RecordedAt {
			return -1
		}
		return 1
	}
	if ea.Verified != eb.Verified {
		if ea.Verified > eb.Verified {
			return -1
		}
		return 1
	}
	return strings.Compare(ea.ID, eb.ID)
}

// scratch holds buffers reused across candidates.
type scratch struct {
	used   []bool
	others []string
}

// maxWords is the longest run of words a text slot recorded with k words
// binds: "padel" may become "tennis balls" but not a whole sentence.
func maxWords(k int) int { return max(3, 2*k) }

// similarity is the Jaccard similarity of e's template and the goal once
// the goal is bound to it, and the bindings (one per slot).
//
// Numbers and quoted values of the goal bind the template's number and
// quoted slots in order. The goal's words that are not literal words of
// the template form runs (split by literal words, quoted values and bound
// numbers; stop words trimmed from their edges); when there are as many
// runs as text slots, and none is longer than maxWords, they bind the text
// slots in order. A bound slot counts as one shared token; an unbound text
// slot counts as the words it stood for, missing from the goal.
func (sc *scratch) similarity(e *compiled, parts []part, ids []int32) (float64, []bind) {
	if cap(sc.used) < len(parts) {
		sc.used = make([]bool, len(parts))
	}
	used := sc.used[:len(parts)]
	clear(used)
	binds := make([]bind, len(e.Slots))
	isLit := func(i int) bool { return ids[i] >= 0 && slices.Contains(e.lits, ids[i]) }

	// Numbers and quoted values, in order.
	for _, k := range []slotKind{slotNumber, slotQuoted} {
		want := pNumber
		if k == slotQuoted {
			want = pQuoted
		}
		p := 0
		for si, sl := range e.Slots {
			if sl.Kind != k {
				continue
			}
			for p < len(parts) && parts[p].kind != want {
				p++
			}
			if p == len(parts) {
				break
			}
			binds[si] = bind{bound: true, start: parts[p].start, end: parts[p].end, text: parts[p].text}
			used[p] = true
			p++
		}
	}
	// Runs of free words for the text slots. Only a goal anchored on the
	// template (sharing at least half its literal words) binds them:
	// otherwise "search {1}" would read any short goal as a search.
	if e.nText > 0 && anchored(e, parts, ids) {
		type run struct{ a, b, ua, ub int } // parts[a:b], stop words trimmed from parts[ua:ub]
		var runs [8]run
		nr := 0
		for i := 0; i < len(parts) && nr < len(runs); {
			free := func(i int) bool {
				return !used[i] && (parts[i].kind == pNumber || parts[i].kind == pWord && !isLit(i))
			}
			if !free(i) {
				i++
				continue
			}
			j := i
			for j < len(parts) && free(j) {
				j++
			}
			a, b := i, j
			for a < b && parts[a].kind == pWord && stopwords[parts[a].norm] {
				a++
			}
			for b > a && parts[b-1].kind == pWord && stopwords[parts[b-1].norm] {
				b--
			}
			if a < b {
				runs[nr] = run{a, b, i, j}
				nr++
			}
			i = j
		}
		take := func(si int, ru run) {
			binds[si] = bind{bound: true, start: parts[ru.a].start, end: parts[ru.b-1].end}
			for k := ru.a; k < ru.b; k++ {
				used[k] = true
			}
		}
		if nr == e.nText {
			// As many runs as slots: bind them in order, when each fits.
			fits, r := true, 0
			for _, sl := range e.Slots {
				if sl.Kind == slotText {
					fits = fits && runs[r].b-runs[r].a <= maxWords(sl.Words)
					r++
				}
			}
			if fits {
				r = 0
				for si, sl := range e.Slots {
					if sl.Kind == slotText {
						take(si, runs[r])
						r++
					}
				}
			}
		} else if nr > 0 {
			// Otherwise bind each slot to the run that sits where the slot
			// sits in the template: right after the literal word before it,
			// or right before the literal word after it. Runs left over
			// stay words of the goal the template lacks.
			var taken [8]bool
			for si, sl := range e.Slots {
				if sl.Kind != slotText {
					continue
				}
				nb := e.nb[si]
				for r := range nr {
					ru := runs[r]
					if taken[r] || ru.b-ru.a > maxWords(sl.Words) {
						continue
					}
					after := nb.prev != "" && ru.ua > 0 && parts[ru.ua-1].norm == nb.prev
					before := nb.next != "" && ru.ub < len(parts) && parts[ru.ub].norm == nb.next
					if after || before {
						taken[r] = true
						take(si, ru)
						break
					}
				}
			}
		}
	}
	// Count the sets.
	inter, eSize := 0, len(e.lits)
	for si, sl := range e.Slots {
		if binds[si].bound {
			inter++
			eSize++
		} else if sl.Kind == slotText {
			eSize += sl.Words
		} else {
			eSize++
		}
	}
	boundSlots := inter
	sc.others = sc.others[:0]
	var seenLits [32]int32
	nl := 0
	for i, p := range parts {
		if used[i] {
			continue
		}
		if p.kind == pWord && isLit(i) {
			if !slices.Contains(seenLits[:nl], ids[i]) && nl < len(seenLits) {
				seenLits[nl] = ids[i]
				nl++
			}
			continue
		}
		if !slices.Contains(sc.others, p.norm) {
			sc.others = append(sc.others, p.norm)
		}
	}
	inter += nl
	gSize := nl + boundSlots + len(sc.others)
	union := eSize + gSize - inter
	if union == 0 {
		return 0, binds
	}
	return float64(inter) / float64(union), binds
}

// anchored reports whether the goal holds at least half of e's literal
// words (and at least one, when e has any).
func anchored(e *compiled, parts []part, ids []int32) bool {
	if len(e.lits) == 0 {
		return true
	}
	n := 0
	for _, l := range e.lits {
		for i := range parts {
			if ids[i] == l {
				n++
				break
			}
		}
	}
	return n > 0 && 2*n >= len(e.lits)
}

// bindMatch builds the Match: bindings against the record's parameters,
// and the steps with bound values swapped in.
func bindMatch(t Trajectory, goal string, sc scored, evaluated int) Match {
	m := Match{Trajectory: t, Similarity: sc.sim, Score: sc.score, Candidates: evaluated}
	m.Steps = slices.Clone(t.Steps)
	for i, p := range t.Params {
		b := Binding{Param: i + 1, Kind: p.Kind, Recorded: p.Value, Value: p.Value}
		if i < len(sc.binds) && sc.binds[i].bound {
			b.Bound = true
			if sc.binds[i].text != "" {
				b.Value = sc.binds[i].text
			} else {
				b.Value = goal[sc.binds[i].start:sc.binds[i].end]
			}
		}
		m.Bindings = append(m.Bindings, b)
		if !b.Bound || b.Value == b.Recorded {
			continue
		}
		for k := range m.Steps {
			st := &m.Steps[k]
			if st.Secret {
				continue
			}
			st.Value = replaceWord(st.Value, b.Recorded, b.Value)
			st.URL = replaceInURL(st.URL, b.Recorded, b.Value)
		}
	}
	return m
}

// replaceWord replaces, case-insensitively, every occurrence of from in s
// that is not part of a longer word: "5" in "top 5" but not in "15".
func replaceWord(s, from, to string) string {
	if from == "" || s == "" {
		return s
	}
	ls, lf := strings.ToLower(s), strings.ToLower(from)
	if len(ls) != len(s) {
		// Lower-casing changed byte lengths: fall back to exact matches.
		ls, lf = s, from
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(ls[i:], lf)
		if j < 0 {
			break
		}
		j += i
		end := j + len(lf)
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (j == 0 || !isWordRune(before)) && (end == len(s) || !isWordRune(after)) {
			b.WriteString(s[i:j])
			b.WriteString(to)
		} else {
			b.WriteString(s[i:end])
		}
		i = end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// replaceInURL swaps a value in a URL in the forms a URL carries it: as
// written, query-escaped (padel+rackets) and path-escaped (padel%20rackets).
func replaceInURL(u, from, to string) string {
	if u == "" {
		return u
	}
	u = replaceWord(u, url.QueryEscape(from), url.QueryEscape(to))
	u = replaceWord(u, url.PathEscape(from), url.PathEscape(to))
	if !strings.ContainsFunc(from, unicode.IsSpace) {
		u = replaceWord(u, from, to)
	}
	return u
}
