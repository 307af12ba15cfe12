package fact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// IDPrefix starts every fact id.
const IDPrefix = "fact_"

// ErrNotFound is a fact id no fact has.
var ErrNotFound = engine.NotFound("no such fact")

// ErrNoVersion is a revert to a version a fact does not have.
var ErrNoVersion = engine.NotFound("no such fact version")

// IDOf names a stored fact: "fact_" and 16 hex digits of the hash of its
// identity (host, type, key, value), the held id's hash, so the id of a
// fact is known from the fact and stays the same across stores.
func IDOf(f Fact) string { return IDPrefix + HeldID(f) }

// Version is a fact as it was before one change: who made the change, when,
// and what it was (Op). Fact is nil for the version an import kept of a
// fact it created (reverting to it removes the fact).
type Version struct {
	Version uint64            `json:"version"`
	At      time.Time         `json:"at"`
	By      engine.Provenance `json:"by"`
	Op      string            `json:"op"`
	Fact    *Fact             `json:"fact"`
}

func (s *Store) keepN() uint64 { return history.KeepN(s.histN) }

// keep stores old (the stored bytes of fact f, nil when f did not exist)
// as f's next version in tx. A fact that did not exist is versioned only
// when an import creates it, so revert --import can remove it.
func (s *Store) keep(tx kv.Txn, op string, f *Fact, old []byte) error {
	if old == nil {
		if s.prov.Source != engine.SourceImported {
			return nil
		}
		old = history.Absent
	}
	c := history.Change{At: s.now(), By: s.prov, Op: history.SetOp(s.prov, op)}
	return history.Keep(tx, history.Fact, IDOf(*f), c, old, s.keepN())
}

// History returns the kept versions of fact id, newest first. A fact with
// none returns ErrNotFound unless it exists.
func (s *Store) History(ctx context.Context, id string) ([]Version, error) {
	var out []Version
	err := s.db.View(ctx, func(r kv.Reader) (err error) {
		out, err = history.Versions[Version](r, history.Fact, id, func() error {
			_, _, _, err := locate(r, id, nil)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fact: history %s: %w", id, err)
	}
	return out, nil
}

// locate finds stored fact id: among the values of hint's (host, type,
// key) when hint is given (one small scan), else among every fact.
func locate(r kv.Reader, id string, hint *Fact) (key, raw []byte, f Fact, err error) {
	prefix := keyspace.SitesPrefix()
	if hint != nil {
		prefix = keyspace.FactValues(domain.Site(hint.Domain), hint.Domain, string(hint.Type), hint.Key)
	}
	err = r.Scan(prefix, kv.ScanOptions{}, func(k, v []byte) error {
		if hint == nil && !keyspace.IsFact(k) {
			return nil
		}
		var c Fact
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		if IDOf(c) == id {
			key, raw, f = bytes.Clone(k), bytes.Clone(v), c
			return kv.ErrStop
		}
		return nil
	})
	if err == nil && key == nil {
		err = fmt.Errorf("fact %s: %w", id, ErrNotFound)
	}
	return key, raw, f, err
}

// Edit changes the value of fact id, keeping its type, key, counts and
// confidence: the fact gets the id of its new value, written with the
// store's provenance (a person's, from the CLI), and both ids keep the
// previous version (op edit), so history and revert work from either. A
// value the screen refuses is refused with the reason; a value the fact's
// key already has is refused too.
func (s *Store) Edit(ctx context.Context, id, value string) (Fact, error) {
	var out Fact
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		k, raw, old, err := locate(tx, id, nil)
		if err != nil {
			return err
		}
		_, _, _, v, err := normalise(old.Domain, string(old.Type), old.Key, value)
		if err != nil {
			return err
		}
		if why := screenOf(old.Domain, old.Key, v); why != "" {
			return engine.Invalid("fact", "the new value fails the screen: "+why)
		}
		if v == old.Value {
			return engine.Invalid("fact", "the new value is the value it has")
		}
		site := domain.Site(old.Domain)
		n := old
		n.Value, n.Provenance = v, s.prov.Stamp(s.now(), site)
		vh := valueHash(v)
		if _, err := tx.Get(keyspace.Fact(site, n.Domain, string(n.Type), n.Key, vh)); err == nil {
			return engine.Invalidf("fact", "%s already has the value %q (%s)", n.Key, v, IDOf(n))
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		c := history.Change{At: s.now(), By: s.prov, Op: history.OpEdit}
		for _, vid := range []string{id, IDOf(n)} {
			if err := history.Keep(tx, history.Fact, vid, c, raw, s.keepN()); err != nil {
				return err
			}
		}
		if err := tx.Delete(k); err != nil {
			return err
		}
		if err := tx.Set(keyspace.FactGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		out = n
		return put(tx, site, n, vh)
	})
	if err != nil {
		return Fact{}, fmt.Errorf("fact: edit %s: %w", id, err)
	}
	s.ev.Emit(EventObserved, map[string]any{
		"domain": out.Domain, "type": string(out.Type), "key": out.Key, "value": out.Value,
		"result": "edited", "confidence": round(out.Confidence), "sources": out.Sources,
	})
	return out, nil
}

// Revert restores fact id to version to (the newest kept when to < 0) and
// keeps the state it replaces (op revert). It returns the fact restored,
// or nil when the version is the absence an import replaced (the fact is
// removed).
func (s *Store) Revert(ctx context.Context, id string, to int64) (*Fact, error) {
	var out *Fact
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		e, err := history.At(tx, history.Fact, id, to, ErrNoVersion)
		if err != nil {
			return err
		}
		out, err = s.restore(tx, id, e.Record, history.OpRevert)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fact: revert %s: %w", id, err)
	}
	return out, nil
}

// restore makes rec (a version's record; Absent: none) the stored state of
// fact id in tx, keeping each state it replaces as a version (op revert).
func (s *Store) restore(tx kv.Txn, id string, rec []byte, op string) (*Fact, error) {
	if err := history.Release(tx, history.Fact, id); err != nil {
		return nil, err
	}
	var v *Fact
	if !history.IsAbsent(rec) {
		v = new(Fact)
		if err := json.Unmarshal(rec, v); err != nil {
			return nil, fmt.Errorf("%w version: %w", history.ErrDamaged, err)
		}
		// A version (an imported one too) reaches prompts only through
		// the screen, as every write does.
		if why := screenOf(v.Domain, v.Key, v.Value); why != "" {
			return nil, engine.Invalid("revert", "the version fails the screen: "+why)
		}
	}
	c := history.Change{At: s.now(), By: s.prov, Op: op}
	// The record id names now, when it is not the one restored (an edit
	// gave the fact another value): kept, then removed.
	if v == nil || IDOf(*v) != id {
		k, raw, cur, err := locate(tx, id, v)
		switch {
		case err == nil:
			if err := history.Keep(tx, history.Fact, id, c, raw, s.keepN()); err != nil {
				return nil, err
			}
			if err := tx.Delete(k); err != nil {
				return nil, err
			}
			if err := tx.Set(keyspace.FactGen(domain.Site(cur.Domain)), []byte(sitecache.Gen()), 0); err != nil {
				return nil, err
			}
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	if v == nil {
		return nil, nil
	}
	site, vh := domain.Site(v.Domain), valueHash(v.Value)
	k := keyspace.Fact(site, v.Domain, string(v.Type), v.Key, vh)
	raw, err := tx.Get(k)
	switch {
	case err == nil:
		if err := history.Keep(tx, history.Fact, IDOf(*v), c, raw, s.keepN()); err != nil {
			return nil, err
		}
	case !errors.Is(err, kv.ErrNotFound):
		return nil, err
	}
	if err := tx.Set(keyspace.FactGen(site), []byte(sitecache.Gen()), 0); err != nil {
		return nil, err
	}
	return v, tx.Set(k, rec, 0)
}

// RevertImport undoes every fact change the import of the file with
// digest sha made, as the history says: each fact it replaced goes back to
// its version before the import, each it created is removed. It reads
// every kept fact version: an operator's command, not a hot path.
func (s *Store) RevertImport(ctx context.Context, sha string) (*history.Reverted, error) {
	return history.RevertImport(ctx, s.db, history.Fact, sha, s.revertOne)
}

// IsID reports whether id names a fact.
func IsID(id string) bool { return strings.HasPrefix(id, IDPrefix) }

// live lists stored facts for a revert by run.
var live = &history.Live{Prefix: keyspace.SitesPrefix(), Is: keyspace.IsFact, ID: func(_, rec []byte) (string, error) {
	var f Fact
	if err := json.Unmarshal(rec, &f); err != nil {
		return "", fmt.Errorf("%w fact: %w", history.ErrDamaged, err)
	}
	return IDOf(f), nil
}}

// RevertRun undoes every fact change run made, as the history says: each
// fact it changed goes back to its version before the run's first change
// (later changes by others are undone too, and kept as versions), each it
// created is removed. It reads every kept fact version and every fact: an
// operator's command, not a hot path.
func (s *Store) RevertRun(ctx context.Context, run string) (*history.Reverted, error) {
	return history.RevertRun(ctx, s.db, history.Fact, run, live, s.revertOne)
}

// Retract withdraws fact id from every read path (lists, prompts, the
// site cache), keeping its version (op retract) and holding it at
// retracted/fact/<id> with reason until Revert restores it.
func (s *Store) Retract(ctx context.Context, id, reason string) (*history.Retraction, error) {
	return history.Retract(ctx, s.db, history.Fact, id, reason, history.Change{At: s.now(), By: s.prov}, func(tx kv.Txn) ([]byte, error) {
		_, raw, _, err := locate(tx, id, nil)
		if err != nil {
			return nil, err
		}
		_, err = s.restore(tx, id, history.Absent, history.OpRetract)
		return raw, err
	})
}

// Retracted returns the retracted facts, by id.
func (s *Store) Retracted(ctx context.Context) (out []history.Retraction, err error) {
	err = s.db.View(ctx, func(r kv.Reader) error { out, err = history.RetractedAll(r, history.Fact); return err })
	if err != nil {
		return nil, fmt.Errorf("fact: retracted: %w", err)
	}
	return out, nil
}

// revertOne restores fact id to rec (absent: removes it) in a transaction
// of its own, for a revert of an import or a run.
func (s *Store) revertOne(ctx context.Context, id string, rec []byte) error {
	return s.db.Update(ctx, func(tx kv.Txn) error { _, err := s.restore(tx, id, rec, history.OpRevert); return err })
}

// Stored returns fact id as it is stored, or an error wrapping
// ErrNotFound: the record in force that its history leads to.
func Stored(r kv.Reader, id string) ([]byte, error) {
	_, raw, _, err := locate(r, id, nil)
	return raw, err
}
