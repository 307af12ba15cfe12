package lesson

import (
	"bytes"
	"context"
	"errors"

	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Warm compiles the recall indexes of the store's sites before anyone
// asks: the global range first (every error recall reads it), then each
// site in key order, until the index caches are full or ctx ends, which is
// not an error (what is left compiles at its first recall, as before). A
// server calls it before it answers, so a fleet that reconnects after a
// start does not queue behind the first recall's compile of a big store
// (on 100,000 lessons the global range alone is ~50,000 entries).
func (s *Store) Warm(ctx context.Context) error {
	sites, err := s.lessonSites(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	for _, site := range sites {
		if ctx.Err() != nil {
			return nil
		}
		err := s.db.View(ctx, func(r kv.Reader) error {
			for part := range indexes {
				if _, err := siteIndexAt(r, site, part); err != nil {
					return err
				}
			}
			return nil
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if indexes[partErrors].Weight() >= indexBudget && indexes[partHosts].Weight() >= indexBudget {
			return nil
		}
	}
	return nil
}

// lessonSites lists the sites that hold a lesson generation token (every
// site a lesson was written in), the global one first: one seek per site,
// not a scan of their keys.
func (s *Store) lessonSites(ctx context.Context) ([]string, error) {
	out := []string{keyspace.Global}
	prefix := keyspace.SitesPrefix()
	err := s.db.View(ctx, func(r kv.Reader) error {
		out = out[:1]
		start := prefix
		for {
			var key []byte
			err := r.Scan(prefix, kv.ScanOptions{KeysOnly: true, Start: start, Limit: 1}, func(k, _ []byte) error {
				key = append(key[:0], k...)
				return nil
			})
			if err != nil || key == nil {
				return err
			}
			site, err := keyspace.SiteOf(key)
			if err != nil {
				return err
			}
			if site != keyspace.Global {
				if _, err := r.Get(keyspace.LessonGen(site)); err == nil {
					out = append(out, site)
				} else if !errors.Is(err, kv.ErrNotFound) {
					return err
				}
			}
			// The next site: past every key of this one ("site/<site>/"
			// then '0', the byte after '/').
			esc := key[:len(prefix)+bytes.IndexByte(key[len(prefix):], '/')]
			start = append(append([]byte(nil), esc...), '0')
		}
	})
	return out, err
}
