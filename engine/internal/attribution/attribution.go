// Package attribution holds what the stores that count attribution
// (facts, selectors, trajectories) share: the check of a run's counts and
// the read-modify-write that adds them to a stored JSON record.
package attribution

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/kv"
)

// Check returns an engine.ErrInvalid error about what unless
// 0 ≤ helped ≤ used ≤ shown: a step can use only what it was shown, and be
// helped only by what it used.
func Check(what string, shown, used, helped int) error {
	if shown < 0 || used < 0 || helped < 0 || used > shown || helped > used {
		return engine.Invalid(what, "want 0 ≤ helped ≤ used ≤ shown")
	}
	return nil
}

// Add decodes the JSON record of type T at key in tx, lets add change it,
// and writes it back with the TTL add returns (0: none). It reports false,
// writing nothing, when the record is gone or add says not to keep it (a
// record expired meanwhile).
func Add[T any](tx kv.Txn, key []byte, add func(*T) (ttl time.Duration, keep bool)) (bool, error) {
	v, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var rec T
	if err := json.Unmarshal(v, &rec); err != nil {
		return false, fmt.Errorf("decode %s: %w", kv.Short(key), err)
	}
	ttl, keep := add(&rec)
	if !keep {
		return false, nil
	}
	b, err := json.Marshal(&rec)
	if err != nil {
		return false, err
	}
	return true, tx.Set(key, b, ttl)
}
