package kv

// Sizer is implemented by a store that knows how many bytes it takes on
// disk (badger: the files in its directory), for a server's metrics.
type Sizer interface {
	// DiskSize returns the bytes the store takes on disk; ok is false when
	// it keeps nothing there (a store in memory) or cannot tell.
	DiskSize() (bytes int64, ok bool)
}

// DiskSize is s's DiskSize when s is a Sizer; ok is false otherwise (etcd:
// its size is the cluster's, reported by etcd itself).
func DiskSize(s Store) (bytes int64, ok bool) {
	if z, isSizer := s.(Sizer); isSizer {
		return z.DiskSize()
	}
	return 0, false
}
