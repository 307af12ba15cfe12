package keyspace

import "fmt"

// Versions: every kind of memory record (lesson, fact, selector,
// trajectory) keeps its past versions under its kind, out of the site
// ranges, so a version is found by the record's id alone:
//
//	<kind>-history/<id>/<seq> → {version, at, by, op, <kind>: record}; seq is 16
//	                            hex digits, numbered without gaps from 0; the
//	                            last N are kept (engine/memory/history)
//	<kind>-history/<id>       → the next seq (16 hex digits): one Get finds it
//
// Lessons' keys (lesson-history/...) are this layout for kind "lesson".

// History is the key of version seq of the record of kind with id.
func History(kind, id string, seq uint64) []byte {
	return []byte(fmt.Sprintf("%s-history/%s/%016x", kind, esc(id), seq))
}

// HistoryNext is the key of a record's next version number.
func HistoryNext(kind, id string) []byte { return []byte(kind + "-history/" + esc(id)) }

// HistoryOf is the range of one record's versions, oldest first.
func HistoryOf(kind, id string) []byte { return []byte(kind + "-history/" + esc(id) + "/") }

// HistoryPrefix is the range of every version (and next version number)
// of one kind.
func HistoryPrefix(kind string) []byte { return []byte(kind + "-history/") }

// Retracted is the key of a retracted record of kind (a fact, selector or
// trajectory; lessons keep theirs at RetractedLesson, the same layout):
// retracted/<kind>/<id> → {kind, id, reason, at, by, record}.
func Retracted(kind, id string) []byte { return []byte("retracted/" + kind + "/" + esc(id)) }

// RetractedOf is the range of the retracted records of kind.
func RetractedOf(kind string) []byte { return []byte("retracted/" + kind + "/") }
