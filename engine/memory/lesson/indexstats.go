package lesson

import (
	"sync/atomic"
	"time"
)

// IndexStats counts the work of the process-wide recall index since the
// process started, for a server's metrics: how often a site's index was
// compiled from the store (a recall that found no index at the site's
// current token) and how often a bucket's overlay of own writes was
// folded into a fresh compile, and the time each took.
type IndexStats struct {
	Builds    int64
	BuildTime time.Duration
	Folds     int64
	FoldTime  time.Duration
}

// indexStats is what ReadIndexStats reads, updated with atomics so that
// counting costs a recall nothing it would notice.
var indexStats struct {
	builds, buildNanos, folds, foldNanos atomic.Int64
}

// ReadIndexStats returns the recall index's counts so far.
func ReadIndexStats() IndexStats {
	return IndexStats{
		Builds:    indexStats.builds.Load(),
		BuildTime: time.Duration(indexStats.buildNanos.Load()),
		Folds:     indexStats.folds.Load(),
		FoldTime:  time.Duration(indexStats.foldNanos.Load()),
	}
}

// countBuild records a compile of a site's index that began at since.
func countBuild(since time.Time) {
	indexStats.buildNanos.Add(int64(time.Since(since)))
	indexStats.builds.Add(1)
}

// countFold records a fold of an overlay that began at since.
func countFold(since time.Time) {
	indexStats.foldNanos.Add(int64(time.Since(since)))
	indexStats.folds.Add(1)
}
