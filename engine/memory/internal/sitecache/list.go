package sitecache

import (
	"context"

	"github.com/engine-dev/engine/engine/domain"
	"github.com/engine-dev/engine/engine/listing"
	"github.com/engine-dev/engine/engine/memory/keyspace"
	"github.com/engine-dev/engine/kv"
)

// Kind is a kind of per-site memory kept as one JSON record a key and
// cached decoded per site (facts, selectors): where its records are and
// how a list of them is ordered, so each kind's list across sites is this
// one body.
type Kind[T any] struct {
	Cache  *Cache[[]T]
	Gen    func(site string) []byte // the key of the site's generation token
	Prefix func(site string) []byte // the prefix of the site's records
	Is     func(key []byte) bool    // whether a key under keyspace.SitesPrefix is one of this kind's records
	Domain func(*T) string          // the host a record is kept for
	Pos    func(*T) string          // a record's position in a list (listing.SortBy)
}

// Site returns every record of site as of r's snapshot, from the cache
// when none was written since it was read (LoadJSON).
func (k *Kind[T]) Site(r kv.Reader, site string) ([]T, error) {
	return LoadJSON(k.Cache, r, site, k.Gen(site), k.Prefix(site))
}

// List returns, in Pos order, the records of host's site kept for a host
// r with match(host, r), or every site's records when host is "". host is
// already a host (domain.Host). A site whose watched token is the cached
// generation is answered without a store read; every site's records are
// read key by key and not cached.
func (k *Kind[T]) List(ctx context.Context, db kv.Store, host string, match func(h, r string) bool) ([]T, error) {
	var out []T
	pick := func(all []T) {
		for i := range all {
			if match(host, k.Domain(&all[i])) {
				out = append(out, all[i])
			}
		}
	}
	if host != "" {
		// A watched token (etcd) at the cached generation: no store read.
		site := domain.Site(host)
		if all, ok := Cached(k.Cache, db, site, k.Gen(site)); ok {
			pick(all)
			listing.SortBy(out, k.Pos)
			return out, nil
		}
	}
	err := db.View(ctx, func(r kv.Reader) error {
		out = out[:0]
		if host != "" {
			all, err := k.Site(r, domain.Site(host))
			if err != nil {
				return err
			}
			pick(all)
			return nil
		}
		var keys [][]byte
		err := r.Scan(keyspace.SitesPrefix(), kv.ScanOptions{KeysOnly: true}, func(key, _ []byte) error {
			if k.Is(key) {
				keys = append(keys, append([]byte(nil), key...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, key := range keys {
			v, err := r.Get(key)
			if err != nil {
				return err
			}
			rec, err := decode[T](key, v)
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	listing.SortBy(out, k.Pos)
	return out, nil
}
