package selector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// IDPrefix starts every selector id.
const IDPrefix = "sel_"

// ErrNotFound is a selector id no selector has.
var ErrNotFound = engine.NotFound("no such selector")

// ErrNoVersion is a revert to a version a selector does not have.
var ErrNoVersion = engine.NotFound("no such selector version")

// IDOf names a stored selector: "sel_" and 16 hex digits of the SHA-256 of
// its identity (host, path scope, role, accessible name, selector), the
// parts of its key, so it is known from the record.
func IDOf(sl Selector) string {
	_, _, nk := normIdentity(sl.Role, sl.Name)
	sum := sha256.Sum256([]byte(sl.Domain + "\x00" + sl.Path + "\x00" + sl.Role + "\x00" + nk + "\x00" + sl.Selector))
	return IDPrefix + hex.EncodeToString(sum[:8])
}

// IsID reports whether id names a selector.
func IsID(id string) bool { return strings.HasPrefix(id, IDPrefix) }

// keyOf is the key stored selector sl lies at.
func keyOf(sl *Selector) []byte {
	_, _, nk := normIdentity(sl.Role, sl.Name)
	return keyspace.Selector(domain.Site(sl.Domain), sl.Domain, pathPart(sl.Path), sl.Role, nk, selHash(sl.Selector))
}

// Version is a selector as it was before one change: who made the change,
// when, and what it was (Op). Selector is nil for the version an import
// kept of a selector it created (reverting to it removes the selector).
type Version struct {
	Version  uint64            `json:"version"`
	At       time.Time         `json:"at"`
	By       engine.Provenance `json:"by"`
	Op       string            `json:"op"`
	Selector *Selector         `json:"selector"`
}

// keep stores old (the stored bytes of selector sl, nil when it did not
// exist) as sl's next version in tx; a selector that did not exist is
// versioned only when an import creates it.
func (s *Store) keep(tx kv.Txn, op string, sl *Selector, old []byte) error {
	if old == nil {
		if s.prov.Source != engine.SourceImported {
			return nil
		}
		old = history.Absent
	}
	c := history.Change{At: s.now(), By: s.prov, Op: history.SetOp(s.prov, op)}
	return history.Keep(tx, history.Selector, IDOf(*sl), c, old, history.KeepN(s.histN))
}

// History returns the kept versions of selector id, newest first. A
// selector with none returns ErrNotFound unless it exists.
func (s *Store) History(ctx context.Context, id string) ([]Version, error) {
	var out []Version
	err := s.db.View(ctx, func(r kv.Reader) (err error) {
		out, err = history.Versions[Version](r, history.Selector, id, func() error {
			_, _, err := locate(r, id)
			return err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("selector: history %s: %w", id, err)
	}
	return out, nil
}

// locate finds stored selector id among every selector.
func locate(r kv.Reader, id string) (key, raw []byte, err error) {
	err = r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{}, func(k, v []byte) error {
		if !keyspace.IsSelector(k) {
			return nil
		}
		var c Selector
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("decode %s: %w", k, err)
		}
		if IDOf(c) == id {
			key, raw = bytes.Clone(k), bytes.Clone(v)
			return kv.ErrStop
		}
		return nil
	})
	if err == nil && key == nil {
		err = fmt.Errorf("selector %s: %w", id, ErrNotFound)
	}
	return key, raw, err
}

// Revert restores selector id to version to (the newest kept when to < 0)
// and keeps the state it replaces (op revert). It returns the selector
// restored, or nil when the version is the absence an import replaced.
func (s *Store) Revert(ctx context.Context, id string, to int64) (*Selector, error) {
	var out *Selector
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		e, err := history.At(tx, history.Selector, id, to, ErrNoVersion)
		if err != nil {
			return err
		}
		out, err = s.restore(tx, id, e.Record, history.OpRevert)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("selector: revert %s: %w", id, err)
	}
	return out, nil
}

// restore makes rec (a version's record; Absent: none) the stored state of
// selector id in tx, keeping the state it replaces (op revert).
func (s *Store) restore(tx kv.Txn, id string, rec []byte, op string) (*Selector, error) {
	if err := history.Release(tx, history.Selector, id); err != nil {
		return nil, err
	}
	c := history.Change{At: s.now(), By: s.prov, Op: op}
	var v *Selector
	var key []byte
	if history.IsAbsent(rec) {
		k, _, err := locate(tx, id)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		key = k
	} else {
		v = new(Selector)
		if err := json.Unmarshal(rec, v); err != nil {
			return nil, fmt.Errorf("%w version: %w", history.ErrDamaged, err)
		}
		if why := screenOf(v.Domain, v.Name, v.Selector); why != "" {
			return nil, engine.Invalid("revert", "the version fails the screen: "+why)
		}
		key = keyOf(v)
	}
	site, err := keyspace.SiteOf(key)
	if err != nil {
		return nil, err
	}
	raw, err := tx.Get(key)
	switch {
	case err == nil:
		if err := history.Keep(tx, history.Selector, id, c, raw, history.KeepN(s.histN)); err != nil {
			return nil, err
		}
	case !errors.Is(err, kv.ErrNotFound):
		return nil, err
	}
	if err := tx.Set(keyspace.SelectorGen(site), []byte(sitecache.Gen()), 0); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, tx.Delete(key)
	}
	return v, tx.Set(key, rec, 0)
}

// RevertImport undoes every selector change the import of the file with
// digest sha made, as the history says: each selector it replaced goes
// back to its version before the import, each it created is removed.
func (s *Store) RevertImport(ctx context.Context, sha string) (*history.Reverted, error) {
	return history.RevertImport(ctx, s.db, history.Selector, sha, s.revertOne)
}

// live lists stored selectors for a revert by run.
var live = &history.Live{Prefix: keyspace.SitesPrefix(), Is: keyspace.IsSelector, ID: func(_, rec []byte) (string, error) {
	var sl Selector
	if err := json.Unmarshal(rec, &sl); err != nil {
		return "", fmt.Errorf("%w selector: %w", history.ErrDamaged, err)
	}
	return IDOf(sl), nil
}}

// RevertRun undoes every selector change run made, as the history says:
// each selector it changed goes back to its version before the run's
// first change (later changes by others are undone too, and kept as
// versions), each it created is removed. It reads every kept selector
// version and every selector: an operator's command, not a hot path.
func (s *Store) RevertRun(ctx context.Context, run string) (*history.Reverted, error) {
	return history.RevertRun(ctx, s.db, history.Selector, run, live, s.revertOne)
}

// Retract withdraws selector id from every read path (lists, prompts, the
// site cache), keeping its version (op retract) and holding it at
// retracted/selector/<id> with reason until Revert restores it.
func (s *Store) Retract(ctx context.Context, id, reason string) (*history.Retraction, error) {
	return history.Retract(ctx, s.db, history.Selector, id, reason, history.Change{At: s.now(), By: s.prov}, func(tx kv.Txn) ([]byte, error) {
		_, raw, err := locate(tx, id)
		if err != nil {
			return nil, err
		}
		_, err = s.restore(tx, id, history.Absent, history.OpRetract)
		return raw, err
	})
}

// Retracted returns the retracted selectors, by id.
func (s *Store) Retracted(ctx context.Context) (out []history.Retraction, err error) {
	err = s.db.View(ctx, func(r kv.Reader) error { out, err = history.RetractedAll(r, history.Selector); return err })
	if err != nil {
		return nil, fmt.Errorf("selector: retracted: %w", err)
	}
	return out, nil
}

// revertOne restores selector id to rec (absent: removes it) in a
// transaction of its own, for a revert of an import or a run.
func (s *Store) revertOne(ctx context.Context, id string, rec []byte) error {
	return s.db.Update(ctx, func(tx kv.Txn) error { _, err := s.restore(tx, id, rec, history.OpRevert); return err })
}

// Stored returns selector id as it is stored, or an error wrapping
// ErrNotFound: the record in force that its history leads to.
func Stored(r kv.Reader, id string) ([]byte, error) {
	_, raw, err := locate(r, id)
	return raw, err
}
