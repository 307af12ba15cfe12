package keyspace

import (
	"fmt"
	"time"
)

// Sessions: the rolling history of the last runs on a site.
//
//	site/<site>/session/<when>/<shash> → session (JSON)
//	site/<site>/session-gen            → "<gen>;<tail>,<tail>,...": the write
//	                                     counter and the tails ("<when>/<shash>")
//	                                     of the kept sessions, newest first
//
// <when> is 16 hex digits of the session's end time in Unix nanoseconds, so
// keys sort by time; <shash> is 16 hex digits of the record's hash, so two
// sessions ending in the same nanosecond both stay and the same session
// imported twice is stored once.
//
// Every session write reads and rewrites session-gen, so concurrent writers
// conflict and the trim to the newest N never misses a new record. Reads go
// through its list, by Get: the range holds the tombstones of every trimmed
// session until compaction, and a scan of it walks them all. A bare
// "<gen>" (written by an engine before the list) means the list is
// unknown: readers scan the range and the next write lists it.

// Session is the key of one session record.
func Session(site string, when time.Time, recordHash string) []byte {
	return SessionAt(site, Stamp(when)+"/"+recordHash)
}

// SessionAt is the key of the session at tail "<when>/<shash>" of site's
// history, as session-gen lists it.
func SessionAt(site, tail string) []byte {
	return []byte("site/" + esc(site) + "/session/" + tail)
}

// Sessions is the range of one site's sessions.
func Sessions(site string) []byte { return []byte("site/" + esc(site) + "/session/") }

// SessionGen is the key every session write of a site reads and rewrites:
// the write counter and the list of kept sessions.
func SessionGen(site string) []byte { return []byte("site/" + esc(site) + "/session-gen") }

// Stamp renders t as 16 hex digits of Unix nanoseconds, so keys sort by
// time. Times before 1970 sort as 1970.
func Stamp(t time.Time) string {
	n := t.UnixNano()
	if n < 0 || t.IsZero() {
		n = 0
	}
	return fmt.Sprintf("%016x", uint64(n))
}
