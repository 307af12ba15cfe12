package keyspace

import (
	"fmt"
	"time"
)

// Sessions: the rolling history of the last runs on a site.
//
//	site/<site>/session/<when>/<shash> → session (JSON)
//	site/<site>/session-gen            → write counter (decimal): every write
//	                                     reads and bumps it, so concurrent
//	                                     writers conflict and the trim to the
//	                                     newest N never misses a new record
//
// <when> is 16 hex digits of the session's end time in Unix nanoseconds, so
// a reverse scan reads the newest first; <shash> is 16 hex digits of the
// record's hash, so two sessions ending in the same nanosecond both stay
// and the same session imported twice is stored once.

// Session is the key of one session record.
func Session(site string, when time.Time, recordHash string) []byte {
	return []byte("site/" + esc(site) + "/session/" + Stamp(when) + "/" + recordHash)
}

// Sessions is the range of one site's sessions.
func Sessions(site string) []byte { return []byte("site/" + esc(site) + "/session/") }

// SessionGen is the key every session write of a site reads and bumps.
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
