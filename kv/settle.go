package kv

import "context"

// Settler is implemented by a store whose writes leave work that runs in
// the background afterwards and competes with whatever comes next (badger:
// merging the tables its write buffer flushed into the levels below). A
// server waits for it before it answers, so that a bulk write's leftover
// work (an import's) is not done beside its first requests.
type Settler interface {
	// Settle returns once that work is done, or ctx's error when ctx
	// ends first. The writes are durable either way: Settle only waits.
	Settle(ctx context.Context) error
}

// Settle is s's Settle when s is a Settler, nil at once otherwise (etcd
// compacts its history on its own schedule, which no writer waits for).
func Settle(ctx context.Context, s Store) error {
	if st, ok := s.(Settler); ok {
		return st.Settle(ctx)
	}
	return nil
}
