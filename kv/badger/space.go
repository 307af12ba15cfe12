package badger

import (
	"fmt"

	"github.com/engine-dev/engine/kv"
)

// DefaultMinFree is the free space (Options.MinFree) a store needs on its disk to take a
// write: room for a memtable's log (badger writes it through mmap, where a
// full disk is SIGBUS, not an error), its flush to a table, and a
// compaction's output, with margin.
const DefaultMinFree = 64 << 20

// spaceGuard refuses writes when the disk of dir is nearly full, so a full
// disk is an error the caller can report, never a crash inside the store.
// Reads are not guarded: they work on a full disk.
type spaceGuard struct {
	dir     string
	minFree uint64 // 0: off
}

func newSpaceGuard(dir string, minFree int64) spaceGuard {
	switch {
	case minFree < 0:
		return spaceGuard{}
	case minFree == 0:
		minFree = DefaultMinFree
	}
	return spaceGuard{dir: dir, minFree: uint64(minFree)}
}

// check returns kv.ErrNoSpace, with the figures, when the disk has less than
// minFree free. A disk whose free space cannot be read is not refused.
func (g spaceGuard) check(op string) error {
	if g.minFree == 0 {
		return nil
	}
	free, ok := freeSpace(g.dir)
	if !ok || free >= g.minFree {
		return nil
	}
	return fmt.Errorf("kv: %s: %w: %s free on the disk of %s, writes need at least %s (reads still work; free some space)",
		op, kv.ErrNoSpace, mib(free), g.dir, mib(g.minFree))
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
