// Package history keeps the past versions of memory records, for every
// kind alike (lessons, facts, selectors, trajectories): the key layout
// (keyspace.History), the gap-free version counter, keeping the last N,
// and the version envelope {version, at, by, op, <kind>: record} with the
// record as the bytes it was stored as, so keeping a version never
// re-encodes the record.
package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// DefaultKeep is how many past versions of a record are kept.
const DefaultKeep = 20

// Kinds a version may be of; each is its keys' prefix and the envelope's
// record field.
const (
	Lesson     = "lesson"
	Fact       = "fact"
	Selector   = "selector"
	Trajectory = "trajectory"
)

// Change is who made one change (the writing store's provenance), when,
// and what it was (op).
type Change struct {
	At time.Time
	By engine.Provenance
	Op string
}

// Entry is one kept version: the change that replaced it and the record
// as it was stored before, undecoded.
type Entry struct {
	Kind    string            `json:"kind"`
	ID      string            `json:"id"`
	Version uint64            `json:"version"`
	At      time.Time         `json:"at"`
	By      engine.Provenance `json:"by"`
	Op      string            `json:"op"`
	Record  json.RawMessage   `json:"record"`
}

// ErrDamaged is a version or counter that does not decode.
var ErrDamaged = errors.New("damaged")

// KeepN returns n, or DefaultKeep when n is not positive.
func KeepN(n int) uint64 {
	if n <= 0 {
		return DefaultKeep
	}
	return uint64(n)
}

// Last returns the newest version number of record id of kind and whether
// it has any: one Get (of the next number, kept beside the versions).
func Last(r kv.Reader, kind, id string) (uint64, bool, error) {
	b, err := r.Get(keyspace.HistoryNext(kind, id))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, err := strconv.ParseUint(string(b), 16, 64)
	if err != nil || n == 0 {
		return 0, false, fmt.Errorf("%s %s: %w next version %q", kind, id, ErrDamaged, b)
	}
	return n - 1, true, nil
}

// Encode returns the envelope of one version: rec (the record's JSON)
// under the kind's field, after version, at, by and op.
func Encode(kind string, seq uint64, c Change, rec []byte) ([]byte, error) {
	by, err := json.Marshal(c.By)
	if err != nil {
		return nil, err
	}
	at, err := c.At.UTC().MarshalJSON()
	if err != nil {
		return nil, err
	}
	op, _ := json.Marshal(c.Op)
	b := make([]byte, 0, len(rec)+len(by)+96)
	b = fmt.Appendf(b, `{"version":%d,"at":%s,"by":%s,"op":%s,"%s":`, seq, at, by, op, kind)
	b = append(b, bytes.TrimSpace(rec)...)
	return append(b, '}'), nil
}

// Keep stores rec (the record as it was stored before change c) as the
// next version of record id, in tx, and drops the version that falls out
// of the last n: one Get, two Sets, one Delete. Versions are numbered
// without gaps, so the one to drop is known without reading.
func Keep(tx kv.Txn, kind, id string, c Change, rec []byte, n uint64) error {
	last, found, err := Last(tx, kind, id)
	if err != nil {
		return err
	}
	seq := uint64(0)
	if found {
		seq = last + 1
	}
	b, err := Encode(kind, seq, c, rec)
	if err != nil {
		return fmt.Errorf("%s %s: encode version: %w", kind, id, err)
	}
	return put(tx, kind, id, seq, b, n)
}

// Put stores b (an envelope, as exported) as version seq of record id,
// moving the next number past it unless a later version is kept, and
// drops what falls out of the last n: for imports.
func Put(tx kv.Txn, kind, id string, seq uint64, b []byte, n uint64) error {
	last, found, err := Last(tx, kind, id)
	if err != nil {
		return err
	}
	if found && last > seq {
		return tx.Set(keyspace.History(kind, id, seq), b, 0)
	}
	return put(tx, kind, id, seq, b, n)
}

func put(tx kv.Txn, kind, id string, seq uint64, b []byte, n uint64) error {
	if err := tx.Set(keyspace.History(kind, id, seq), b, 0); err != nil {
		return err
	}
	if err := tx.Set(keyspace.HistoryNext(kind, id), fmt.Appendf(nil, "%016x", seq+1), 0); err != nil {
		return err
	}
	if seq >= n {
		return tx.Delete(keyspace.History(kind, id, seq-n))
	}
	return nil
}

// Get returns version seq of record id (the newest when seq < 0), or an
// error wrapping kv.ErrNotFound.
func Get(r kv.Reader, kind, id string, seq int64) ([]byte, error) {
	if seq < 0 {
		last, found, err := Last(r, kind, id)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, missingVersion(fmt.Sprintf("%s %s has no earlier version", kind, id))
		}
		seq = int64(last)
	}
	b, err := r.Get(keyspace.History(kind, id, uint64(seq)))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, missingVersion(fmt.Sprintf("%s %s has no version %d", kind, id, seq))
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s version %d: %w", kind, id, seq, err)
	}
	return b, nil
}

// missingVersion is a version Get does not find: it says which, and is
// kv.ErrNotFound to errors.Is without the store's own words in its text.
type missingVersion string

func (e missingVersion) Error() string { return string(e) }
func (e missingVersion) Unwrap() error { return kv.ErrNotFound }

// List returns the kept versions of record id, newest first, as stored.
func List(r kv.Reader, kind, id string) ([][]byte, error) {
	var out [][]byte
	err := r.Scan(keyspace.HistoryOf(kind, id), kv.ScanOptions{Reverse: true}, func(_, b []byte) error {
		out = append(out, bytes.Clone(b))
		return nil
	})
	return out, err
}

// Each calls fn with every kept version of kind, by id and then oldest
// first: the id, the version number and the envelope as stored.
func Each(r kv.Reader, kind string, fn func(id string, seq uint64, b []byte) error) error {
	prefix := keyspace.HistoryPrefix(kind)
	return r.Scan(prefix, kv.ScanOptions{}, func(k, b []byte) error {
		rest := string(k[len(prefix):])
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return nil // a record's next-version counter
		}
		seq, err := strconv.ParseUint(rest[i+1:], 16, 64)
		if err != nil {
			return fmt.Errorf("%w version key %s", ErrDamaged, k)
		}
		return fn(keyspace.LastPart([]byte(rest[:i])), seq, b)
	})
}

// Forget deletes every kept version of record id, in tx.
func Forget(tx kv.Txn, kind, id string) error {
	var keys [][]byte
	err := tx.Scan(keyspace.HistoryOf(kind, id), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range append(keys, keyspace.HistoryNext(kind, id)) {
		if err := tx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Decode splits an envelope into its entry: the change and the record
// (under the kind's field) undecoded.
func Decode(kind, id string, b []byte) (Entry, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Entry{}, fmt.Errorf("%s %s: %w version: %w", kind, id, ErrDamaged, err)
	}
	e := Entry{Kind: kind, ID: id, Record: m[kind]}
	for f, p := range map[string]any{"version": &e.Version, "at": &e.At, "by": &e.By, "op": &e.Op} {
		if v, ok := m[f]; ok {
			if err := json.Unmarshal(v, p); err != nil {
				return Entry{}, fmt.Errorf("%s %s: %w version %s: %w", kind, id, ErrDamaged, f, err)
			}
		}
	}
	if len(e.Record) == 0 {
		return Entry{}, fmt.Errorf("%s %s: %w version: no %s", kind, id, ErrDamaged, kind)
	}
	return e, nil
}

// Ops a version records for facts, selectors and trajectories: what
// replaced it. (Lessons name theirs in engine/memory/lesson.)
const (
	OpObserve    = "observe"    // a fact confirmed by a sighting
	OpContradict = "contradict" // a fact contradicted by a rival's sighting
	OpUse        = "use"        // a selector used (a success or a failure)
	OpRecord     = "record"     // a trajectory replaced by a new run of its template
	OpSet        = "set"        // replaced as given (Put)
	OpImport     = "import"     // replaced, or created, by an import
	OpApprove    = "approve"    // replaced by an approved held record
	OpAttribute  = "attribute"  // attribution counts added
	OpStale      = "stale"      // marked stale (the site changed)
	OpEdit       = "edit"       // changed by a person
	OpRevert     = "revert"     // replaced by a revert
	OpRemove     = "remove"     // deleted
	OpPrune      = "prune"      // pruned (contradicted below the floor)
)

// Absent is the record of a version kept for a record an import created:
// reverting to it removes the record.
var Absent = []byte("null")

// IsAbsent reports whether a version's record is Absent.
func IsAbsent(rec []byte) bool { return len(rec) == 0 || string(bytes.TrimSpace(rec)) == "null" }

// SetOp is op, or OpImport when the writer is an import.
func SetOp(by engine.Provenance, op string) string {
	if by.Source == engine.SourceImported {
		return OpImport
	}
	return op
}

// Reverted is what undoing one import (or run) did to one kind: the
// records restored to their state before it, and those it created,
// removed.
type Reverted struct {
	Restored []string `json:"restored"`
	Removed  []string `json:"removed"`
}

// Kinds is what undoing one import or run did to each kind of memory (nil:
// the kind was not reached, an earlier one failed).
type Kinds struct {
	Lessons      *Reverted `json:"lessons"`
	Facts        *Reverted `json:"facts"`
	Selectors    *Reverted `json:"selectors"`
	Trajectories *Reverted `json:"trajectories"`
}

// Total is how many records the revert restored and removed.
func (k *Kinds) Total() (restored, removed int) {
	for _, r := range []*Reverted{k.Lessons, k.Facts, k.Selectors, k.Trajectories} {
		if r != nil {
			restored, removed = restored+len(r.Restored), removed+len(r.Removed)
		}
	}
	return restored, removed
}

// Each calls fn with each kind's name (lesson, fact, selector,
// trajectory) and what the revert did to it, skipping kinds not reached.
func (k *Kinds) Each(fn func(kind string, r *Reverted)) {
	for _, e := range []struct {
		kind string
		r    *Reverted
	}{{Lesson, k.Lessons}, {Fact, k.Facts}, {Selector, k.Selectors}, {Trajectory, k.Trajectories}} {
		if e.r != nil {
			fn(e.kind, e.r)
		}
	}
}

// Firsts returns, per record id of kind, the earliest kept version whose
// change by matches: what the record was before the first such change.
func Firsts(r kv.Reader, kind string, by func(engine.Provenance) bool) (map[string]Entry, error) {
	out := map[string]Entry{}
	err := Each(r, kind, func(id string, _ uint64, b []byte) error {
		if _, ok := out[id]; ok {
			return nil
		}
		e, err := Decode(kind, id, b)
		if err != nil {
			return err
		}
		if by(e.By) {
			out[id] = e
		}
		return nil
	})
	return out, err
}

// Versions returns the kept versions of record id of kind, newest first,
// each decoded into V. When none is kept it returns exists's error, so a
// record that is not there reads as not found and one that is as no
// history.
func Versions[V any](r kv.Reader, kind, id string, exists func() error) ([]V, error) {
	bs, err := List(r, kind, id)
	if err != nil {
		return nil, err
	}
	out := make([]V, 0, len(bs))
	for _, b := range bs {
		var v V
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%w version: %w", ErrDamaged, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return out, exists()
	}
	return out, nil
}

// At returns version to of record id of kind (the newest kept when to < 0),
// decoded; none is noVersion (wrapping kv.ErrNotFound).
func At(r kv.Reader, kind, id string, to int64, noVersion error) (Entry, error) {
	b, err := Get(r, kind, id, to)
	if errors.Is(err, kv.ErrNotFound) {
		return Entry{}, fmt.Errorf("%w: %w", noVersion, err)
	}
	if err != nil {
		return Entry{}, err
	}
	return Decode(kind, id, b)
}

// Live lists the stored records of one kind for RevertBy: the keys under
// Prefix that Is accepts, each named by ID (from its key and record).
type Live struct {
	Prefix []byte
	Is     func(key []byte) bool
	ID     func(key, rec []byte) (string, error)
}

// provenanceOf reads the provenance a record (as stored) carries.
func provenanceOf(rec []byte) engine.Provenance {
	var v struct {
		Provenance engine.Provenance `json:"provenance"`
	}
	_ = json.Unmarshal(rec, &v) // a record that does not decode matches nothing
	return v.Provenance
}

// RevertBy undoes what the writer match names (one import, one run)
// changed in one kind, as the history says, and returns what it did (in id
// order). For each record, the earliest kept version that either the
// writer made (its by matches) or that holds the writer's own record (its
// provenance matches) decides: the writer's own record, or Absent, means
// the writer created it, and restore removes it; any other is what it was
// before the writer's first change, and restore puts it back. Changes made
// after the writer's are undone with it; restore keeps them as versions.
// A stored record the writer created and nobody changed has no version:
// live (when given) finds it by its provenance, and it is removed. It
// reads every kept version of the kind (and every record, with live): an
// operator's command, not a hot path.
func RevertBy(ctx context.Context, db kv.Store, kind string, match func(engine.Provenance) bool, live *Live, restore func(ctx context.Context, id string, rec []byte) error) (*Reverted, error) {
	out := &Reverted{Restored: []string{}, Removed: []string{}}
	firsts := map[string]Entry{}
	err := db.View(ctx, func(r kv.Reader) error {
		err := Each(r, kind, func(id string, _ uint64, b []byte) error {
			if _, ok := firsts[id]; ok {
				return nil
			}
			e, err := Decode(kind, id, b)
			if err != nil {
				return err
			}
			if match(e.By) {
				firsts[id] = e
			} else if !IsAbsent(e.Record) && match(provenanceOf(e.Record)) {
				e.Record = Absent // the writer's own record: it created it
				firsts[id] = e
			}
			return nil
		})
		if err != nil || live == nil {
			return err
		}
		return r.Scan(live.Prefix, kv.ScanOptions{}, func(k, b []byte) error {
			if !live.Is(k) || !match(provenanceOf(b)) {
				return nil
			}
			id, err := live.ID(k, b)
			if err != nil {
				return err
			}
			if _, ok := firsts[id]; !ok {
				firsts[id] = Entry{Kind: kind, ID: id, Record: Absent}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(firsts))
	for id := range firsts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		rec := firsts[id].Record
		if IsAbsent(rec) {
			rec = Absent
		}
		if err := restore(ctx, id, rec); err != nil {
			return out, fmt.Errorf("%s: %w", id, err)
		}
		if IsAbsent(rec) {
			out.Removed = append(out.Removed, id)
		} else {
			out.Restored = append(out.Restored, id)
		}
	}
	return out, nil
}

// RevertImport undoes what the import of the file with digest sha changed
// in one kind (RevertBy, by the versions' by.sha256; an import keeps a
// version of each record it creates, so no record scan is needed). Its
// errors name the kind.
func RevertImport(ctx context.Context, db kv.Store, kind, sha string, restore func(ctx context.Context, id string, rec []byte) error) (*Reverted, error) {
	out, err := RevertBy(ctx, db, kind, func(p engine.Provenance) bool { return p.SHA256 == sha }, nil, restore)
	if err != nil {
		return out, fmt.Errorf("%s: revert import %s: %w", kind, sha, err)
	}
	return out, nil
}

// RevertRun undoes what run changed in one kind (RevertBy, by by.run and
// the records' provenance.run); live finds the records the run created
// that nobody changed since. Its errors name the kind.
func RevertRun(ctx context.Context, db kv.Store, kind, run string, live *Live, restore func(ctx context.Context, id string, rec []byte) error) (*Reverted, error) {
	run = strings.TrimSpace(run)
	if run == "" {
		return nil, fmt.Errorf("%s: %w", kind, engine.Invalid("revert", "the run id is empty"))
	}
	out, err := RevertBy(ctx, db, kind, func(p engine.Provenance) bool { return p.Run == run }, live, restore)
	if err != nil {
		return out, fmt.Errorf("%s: revert run %s: %w", kind, run, err)
	}
	return out, nil
}

// Entries returns the kept versions of record id, newest first, decoded.
func Entries(r kv.Reader, kind, id string) ([]Entry, error) {
	bs, err := List(r, kind, id)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(bs))
	for _, b := range bs {
		e, err := Decode(kind, id, b)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// OpRetract is a version's op when a person retracted the record.
const OpRetract = "retract"

// Retraction is a record withdrawn from every read path by a person, held
// apart with the reason until a revert restores it.
type Retraction struct {
	Kind   string            `json:"kind"`
	ID     string            `json:"id"`
	Reason string            `json:"reason"`
	At     time.Time         `json:"at"`
	By     engine.Provenance `json:"by"`
	Record json.RawMessage   `json:"record"`
}

// Retract withdraws record id of kind from every read path and holds it
// with reason (Hold), in one transaction of db: take removes the record
// (keeping its version, op retract) and returns its bytes as they were
// stored. It is the Retract of every store that keeps its versions here.
func Retract(ctx context.Context, db kv.Store, kind, id, reason string, c Change, take func(kv.Txn) ([]byte, error)) (*Retraction, error) {
	reason, err := Reason(reason)
	if err != nil {
		return nil, err
	}
	var out *Retraction
	err = db.Update(ctx, func(tx kv.Txn) error {
		raw, err := take(tx)
		if err != nil {
			return err
		}
		out, err = Hold(tx, kind, id, reason, c, raw)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: retract %s: %w", kind, id, err)
	}
	return out, nil
}

// Hold stores the retraction of record id of kind (rec: the record as it
// was stored), in tx; the caller removes the record and keeps its version.
func Hold(tx kv.Txn, kind, id, reason string, c Change, rec []byte) (*Retraction, error) {
	rt := &Retraction{Kind: kind, ID: id, Reason: reason, At: c.At.UTC(), By: c.By, Record: bytes.Clone(rec)}
	b, err := json.Marshal(rt)
	if err != nil {
		return nil, err
	}
	return rt, tx.Set(keyspace.Retracted(kind, id), b, 0)
}

// Release ends the retraction of record id of kind, if it has one, in tx.
func Release(tx kv.Txn, kind, id string) error { return tx.Delete(keyspace.Retracted(kind, id)) }

// Reason checks a retraction's reason: trimmed, and required. The error
// names the request's field; the CLI checks its --reason itself.
func Reason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "", engine.Invalid("retract", `the field "reason" is blank: say why the record is withdrawn`)
	}
	return reason, nil
}

// RetractedAll returns the retracted records of kind, by id.
func RetractedAll(r kv.Reader, kind string) ([]Retraction, error) {
	out := []Retraction{}
	err := r.Scan(keyspace.RetractedOf(kind), kv.ScanOptions{}, func(k, b []byte) error {
		var rt Retraction
		if err := json.Unmarshal(b, &rt); err != nil {
			return fmt.Errorf("%s %s: %w retraction: %w", kind, keyspace.LastPart(k), ErrDamaged, err)
		}
		out = append(out, rt)
		return nil
	})
	return out, err
}
