package badger

import (
	"fmt"
	"os"
	"path/filepath"
)

// removeHalfCreatedFiles removes what a kill -9 leaves when it lands while
// badger creates a write-ahead log (*.mem) or value log (*.vlog) file: an
// empty file. badger sizes and stamps a header on such a file right after
// creating it, and on the next open takes an empty one for a file it just
// made and fails ("Create a new file"). An empty file holds nothing, so
// removing it loses nothing; badger makes a fresh one as needed. Only the
// holder of the data dir's lock calls this, so no other process is writing
// those files.
func removeHalfCreatedFiles(dir string) error {
	for _, pattern := range []string{"*.mem", "*.vlog"} {
		names, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, name := range names {
			fi, err := os.Stat(name)
			if err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
				continue
			}
			if err := os.Remove(name); err != nil {
				return fmt.Errorf("kv: removing the empty file %s a crash left: %w", name, err)
			}
		}
	}
	return nil
}
