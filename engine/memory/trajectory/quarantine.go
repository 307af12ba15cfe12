package trajectory

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/engine/trust/injection"
	"github.com/engine-dev/engine/kv"
)

// EventQuarantined: a trajectory whose goal or a step's text failed the
// screen was held out of every match. Fields: id, domain, goal, reason.
const EventQuarantined = "trajectory_quarantined"

// ErrNotQuarantined is an approve or reject of an id no held trajectory
// has.
var ErrNotQuarantined = engine.NotFound("no such quarantined trajectory")

// emailRE finds email addresses (see screenOf).
var emailRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}`)
})

// screenOf returns why t must be held out of every match, or "": the
// texts a replayed trajectory shows a model (its goal, and each step's
// element name, value and selector) may come from a page. A step's URL is
// where the browser was, not text a page wrote, and is not screened (the
// link check would hold every run that crossed to another site). The
// secret placeholder is the engine's own and is not held against it, and
// neither is an email address in the goal or a typed value: it is the
// user's own (logging in as alice@gmail.com on a shop), not a link the
// page offers. Other text aimed at the model still holds it.
func screenOf(t *Trajectory) string {
	o := injection.Options{Domain: t.Domain}
	text := func(s string) string { return strings.ReplaceAll(s, SecretPlaceholder, "secret") }
	own := func(s string) string { return emailRE().ReplaceAllString(text(s), "an address") }
	if r := injection.Text(own(t.Goal), o); r != "" {
		return "goal: " + r
	}
	for i, st := range t.Steps {
		for _, f := range []struct{ name, v string }{{"name", st.Name}, {"value", st.Value}, {"selector", st.Selector}} {
			if f.v == "" {
				continue
			}
			v := text(f.v)
			if f.name == "value" && st.Action != "finish" {
				v = own(f.v)
			}
			if r := injection.Text(v, o); r != "" {
				return fmt.Sprintf("step %d %s: %s", i+1, f.name, r)
			}
		}
	}
	return ""
}

// hold writes prepared trajectory t to quarantine with reason, with the
// same lifetime a stored one would have; it replaces a held trajectory of
// the same id and leaves a stored one as it is.
func (s *Store) hold(ctx context.Context, t Trajectory, reason string, ttl time.Duration, nSecrets int) (Trajectory, error) {
	t.Quarantine = reason
	t.Runs = max(t.Runs, 1)
	b, err := json.Marshal(t)
	if err != nil {
		return Trajectory{}, err
	}
	err = s.db.Update(ctx, func(tx kv.Txn) error {
		return tx.Set(keyspace.QuarantinedTrajectory(domain.Site(t.Domain), t.ID), b, ttl)
	})
	if err != nil {
		return Trajectory{}, fmt.Errorf("trajectory: quarantine %s %q: %w", t.Domain, t.Goal, err)
	}
	s.opts.Events.Emit(EventQuarantined, map[string]any{
		"domain": t.Domain, "id": t.ID, "goal": t.Goal, "reason": reason, "steps": len(t.Steps), "secrets": nSecrets,
	})
	return t, nil
}

// Quarantined returns the unexpired trajectories held out of every match,
// each with its reason, by site and id.
func (s *Store) Quarantined(ctx context.Context) ([]Trajectory, error) {
	out := []Trajectory{}
	now := s.opts.Now()
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		return r.Scan(keyspace.QuarantinedTrajectories(), kv.ScanOptions{}, func(_, v []byte) error {
			var t Trajectory
			if json.Unmarshal(v, &t) != nil || !now.Before(t.ExpiresAt) {
				return nil // damaged or expired: never shown anyway
			}
			out = append(out, t)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("trajectory: quarantined: %w", err)
	}
	return out, nil
}

// held returns held trajectory id and its key (a scan of the held
// trajectories' keys: bounded by what is held, not by memory).
func (s *Store) held(ctx context.Context, id string) (Trajectory, []byte, error) {
	var t Trajectory
	var key []byte
	err := s.db.View(ctx, func(r kv.Reader) error {
		key = nil
		err := r.Scan(keyspace.QuarantinedTrajectories(), kv.ScanOptions{KeysOnly: true}, func(k, _ []byte) error {
			if keyspace.LastPart(k) == id {
				key = append([]byte(nil), k...)
				return kv.ErrStop
			}
			return nil
		})
		if err != nil || key == nil {
			return err
		}
		v, err := r.Get(key)
		if err != nil {
			return err
		}
		return json.Unmarshal(v, &t)
	})
	if err == nil && (key == nil || !s.opts.Now().Before(t.ExpiresAt)) {
		err = ErrNotQuarantined
	}
	return t, key, err
}

// Approve releases held trajectory id: a person read it and it may be
// followed. It is stored as it was held (replacing a stored one of the
// same id, as a new run of its template would) and matched from then on.
func (s *Store) Approve(ctx context.Context, id string) (Trajectory, error) {
	t, key, err := s.held(ctx, id)
	if err == nil {
		t, err = s.write(ctx, t, t.ExpiresAt.Sub(s.opts.Now()), 0, key)
	}
	if err != nil {
		return Trajectory{}, fmt.Errorf("trajectory: approve %s: %w", id, err)
	}
	return t, nil
}

// Reject deletes held trajectory id.
func (s *Store) Reject(ctx context.Context, id string) error {
	_, key, err := s.held(ctx, id)
	if err == nil {
		err = s.db.Update(ctx, func(tx kv.Txn) error { return tx.Delete(key) })
	}
	if err != nil {
		return fmt.Errorf("trajectory: reject %s: %w", id, err)
	}
	return nil
}
