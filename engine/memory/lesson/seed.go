package lesson

import (
	"context"
	"errors"
	"fmt"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Seeds are the three lessons every memory starts with.
func Seeds() []Lesson {
	return []Lesson{
		{
			Lesson:        "If fill fails, click(ref) to focus the input, then type(text) to enter text.",
			Category:      ToolFallback,
			FailedCommand: "fill",
			ErrorPattern:  "too many arguments",
			Source:        SourceSeed,
		},
		{
			Lesson:   "After entering text in a search box, press Enter to submit. Avoid clicking submit buttons: autocomplete dropdowns often cover them.",
			Category: BestPractice,
			Source:   SourceSeed,
		},
		{
			Lesson:        "If an overlay or popup is blocking an element, press Escape to dismiss it before interacting with elements behind it.",
			Category:      BestPractice,
			FailedCommand: "click",
			ErrorPattern:  "would receive the click",
			Source:        SourceSeed,
		},
	}
}

// Seed writes the seed lessons the first time a memory is opened. It does
// nothing afterwards, even when seeds were removed by hand since.
func (s *Store) Seed(ctx context.Context) error {
	seeds := Seeds()
	for i := range seeds {
		seeds[i].TriggeredDomains = []string{}
		seeds[i].Trust = Trusted
		seeds[i].Provenance = engine.Provenance{Source: SourceSeed}.Stamp(s.opts.Now(), "")
		if err := s.normalize(&seeds[i]); err != nil {
			return fmt.Errorf("lesson: seed %d: %w", i, err)
		}
	}
	err := s.db.Update(ctx, func(tx kv.Txn) error {
		if _, err := tx.Get(keyspace.Seeded()); err == nil {
			return nil
		} else if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		for i := range seeds {
			if _, err := load(tx, seeds[i].ID); err == nil {
				continue
			}
			if err := put(tx, nil, &seeds[i]); err != nil {
				return err
			}
		}
		return tx.Set(keyspace.Seeded(), []byte("1"), 0)
	})
	if err != nil {
		return fmt.Errorf("lesson: seed: %w", err)
	}
	return nil
}
