package fact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/internal/sitecache"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/trust/injection"
	"github.com/engine-dev/engine/kv"
)

// ErrNotQuarantined is an approve or reject of an id no held fact has.
var ErrNotQuarantined = engine.NotFound("no such quarantined fact")

// screenOf returns why a fact must be held out of every prompt, or "": its
// key and value are what a model is shown, and both may come from a page
// (an error message, a flow's element names).
func screenOf(host, key, value string) string {
	if r := injection.Text(key, injection.Options{Domain: host}); r != "" {
		return "key: " + r
	}
	if r := injection.Text(value, injection.Options{Domain: host}); r != "" {
		return "value: " + r
	}
	return ""
}

// HeldID names a held fact: 16 hex digits of the SHA-256 of its identity
// (host, type, key, value), so a fact held twice is held once.
func HeldID(f Fact) string {
	sum := sha256.Sum256([]byte(f.Domain + "\x00" + string(f.Type) + "\x00" + f.Key + "\x00" + f.Value))
	return hex.EncodeToString(sum[:8])
}

// hold writes f (normalised) to quarantine with reason. An observation of
// a fact already held confirms the held record (it is not shown, so it
// contradicts no shown fact); a put replaces it.
func (s *Store) hold(ctx context.Context, f Fact, reason string, observe bool) (Fact, error) {
	site := domain.Site(f.Domain)
	f.ID, f.Quarantine = HeldID(f), reason
	if observe {
		f.Provenance, f.LastRun = s.prov.Stamp(f.FirstSeen, site), s.prov.Run
	}
	k := keyspace.QuarantinedFact(site, f.ID)
	var out Fact
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		out = f
		if observe {
			v, err := tx.Get(k)
			switch {
			case err == nil:
				var old Fact
				if json.Unmarshal(v, &old) == nil {
					old.Confidence = confirm(old.Confidence)
					old.Sources++
					old.LastSeen = f.LastSeen
					if s.prov.Run != "" {
						old.LastRun = s.prov.Run
					}
					old.ID, old.Quarantine = f.ID, reason
					out = old
				}
			case !errors.Is(err, kv.ErrNotFound):
				return err
			}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return tx.Set(k, b, 0)
	})
	if err != nil {
		return Fact{}, fmt.Errorf("fact: quarantine %s/%s/%s: %w", f.Domain, f.Type, f.Key, err)
	}
	s.ev.Emit(EventQuarantined, map[string]any{
		"id": out.ID, "domain": out.Domain, "type": string(out.Type), "key": out.Key, "value": out.Value, "reason": reason,
	})
	return out, nil
}

// Quarantined returns the facts held out of every prompt, each with its id
// and reason, by site and id.
func (s *Store) Quarantined(ctx context.Context) ([]Fact, error) {
	out := []Fact{}
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.QuarantinedFacts(), kv.ScanOptions{}, func(k, v []byte) error {
			var f Fact
			if json.Unmarshal(v, &f) != nil {
				return nil // a damaged held fact is never shown anyway
			}
			f.ID = keyspace.LastPart(k)
			out = append(out, f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("fact: quarantined: %w", err)
	}
	return out, nil
}

// heldKey finds the key of held fact id (a scan of the held facts' keys:
// bounded by what is held, not by memory).
func heldKey(r kv.Reader, id string) ([]byte, error) {
	var key []byte
	err := r.Scan(keyspace.QuarantinedFacts(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
		if keyspace.LastPart(k) == id {
			key = append([]byte(nil), k...)
			return kv.ErrStop
		}
		return nil
	})
	if err == nil && key == nil {
		err = fmt.Errorf("fact %s: %w", id, ErrNotQuarantined)
	}
	return key, err
}

// Approve releases held fact id: a person read it and it is knowledge. It
// joins the facts as it was held (or confirms the same fact if one was
// stored meanwhile), contradicting no rival, and reaches the prompt once
// its confidence does.
func (s *Store) Approve(ctx context.Context, id string) (Fact, error) {
	var out Fact
	now := s.now().UTC()
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		hk, err := heldKey(tx, id)
		if err != nil {
			return err
		}
		b, err := tx.Get(hk)
		if err != nil {
			return err
		}
		var f Fact
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("decode %s: %w", hk, err)
		}
		if err := tx.Delete(hk); err != nil {
			return err
		}
		f.ID, f.Quarantine = "", ""
		site, vh := domain.Site(f.Domain), valueHash(f.Value)
		v, err := tx.Get(keyspace.Fact(site, f.Domain, string(f.Type), f.Key, vh))
		switch {
		case err == nil:
			var have Fact
			if err := json.Unmarshal(v, &have); err != nil {
				return fmt.Errorf("decode fact %s: %w", f.Key, err)
			}
			if err := s.keep(tx, history.OpApprove, &have, v); err != nil {
				return err
			}
			have.Confidence = confirm(have.Confidence)
			have.Sources++
			have.LastSeen = now
			f = have
		case !errors.Is(err, kv.ErrNotFound):
			return err
		}
		out = f
		if err := tx.Set(keyspace.FactGen(site), []byte(sitecache.Gen()), 0); err != nil {
			return err
		}
		return put(tx, site, f, vh)
	})
	if err != nil {
		return Fact{}, fmt.Errorf("fact: approve %s: %w", id, err)
	}
	s.ev.Emit(EventObserved, map[string]any{
		"domain": out.Domain, "type": string(out.Type), "key": out.Key, "value": out.Value,
		"result": "approved", "confidence": round(out.Confidence), "sources": out.Sources,
	})
	return out, nil
}

// Reject deletes held fact id.
func (s *Store) Reject(ctx context.Context, id string) error {
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		hk, err := heldKey(tx, id)
		if err != nil {
			return err
		}
		return tx.Delete(hk)
	})
	if err != nil {
		return fmt.Errorf("fact: reject %s: %w", id, err)
	}
	return nil
}
