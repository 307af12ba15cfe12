package keyspace

import (
	"fmt"
	"net/url"
	"strings"
)

// LessonID maps a lesson id to the site it is stored under.
func LessonID(id string) []byte { return []byte("id/lesson/" + esc(id)) }

// LessonIDPrefix is the range of all lesson ids.
func LessonIDPrefix() []byte { return []byte("id/lesson/") }

// Lesson is the key of a lesson record.
func Lesson(site, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson/" + esc(id))
}

// Lessons is the range of one site's lesson records.
func Lessons(site string) []byte { return []byte("site/" + esc(site) + "/lesson/") }

// use renders a use count so that keys sort most used first.
func use(n int) string { return fmt.Sprintf("%016x", ^uint64(n)) }

// LessonByCommand indexes a lesson under its failed_command ("" for none),
// most used first.
func LessonByCommand(site, cmd string, useCount int, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson-cmd/" + esc(cmd) + "/" + use(useCount) + "/" + esc(id))
}

// LessonsByCommand is the range of one site's lessons for one command.
func LessonsByCommand(site, cmd string) []byte {
	return []byte("site/" + esc(site) + "/lesson-cmd/" + esc(cmd) + "/")
}

// LessonCmdIndex is the range of one site's error-recall index, every
// command's entries.
func LessonCmdIndex(site string) []byte { return []byte("site/" + esc(site) + "/lesson-cmd/") }

// LessonHostIndex is the range of one site's domain-recall index, every
// host's entries.
func LessonHostIndex(site string) []byte { return []byte("site/" + esc(site) + "/lesson-host/") }

// LessonByHost indexes a site-bound lesson under the host it is bound to,
// most used first.
func LessonByHost(site, host string, useCount int, id string) []byte {
	return []byte("site/" + esc(site) + "/lesson-host/" + esc(host) + "/" + use(useCount) + "/" + esc(id))
}

// LessonsByHost is the range of the lessons bound to exactly host.
func LessonsByHost(site, host string) []byte {
	return []byte("site/" + esc(site) + "/lesson-host/" + esc(host) + "/")
}

// LessonGen is the key of one site's lesson generation token: a fresh
// random value (sitecache.Gen) written in the same transaction as every
// write of a lesson record or index entry in the site's range, so a recall
// index compiled in memory is trusted only while the token it was built at
// is still there. DropPrefix of the site range drops it with the lessons.
func LessonGen(site string) []byte { return []byte("site/" + esc(site) + "/lesson-gen") }

// Tier1 orders a Tier 1 lesson: most used first, seeds before learned at
// equal use, then by id.
func Tier1(useCount int, seed bool, id string) []byte {
	src := "1"
	if seed {
		src = "0"
	}
	return []byte("site/" + Global + "/tier1/" + use(useCount) + src + "/" + esc(id))
}

// Tier1Prefix is the range of the Tier 1 order.
func Tier1Prefix() []byte { return []byte("site/" + Global + "/tier1/") }

// LearnedLog marks an action log (by its digest, lesson.LogDigest) as
// learned, under the site it ran on: learning it again changes nothing,
// and forgetting the site forgets that it was learned.
func LearnedLog(site, digest string) []byte {
	return []byte("site/" + esc(site) + "/learned-log/" + esc(digest))
}

// LessonDue indexes a learned lesson by the day it was last used.
func LessonDue(lastUsed, id string) []byte { return []byte("due/lesson/" + lastUsed + "/" + esc(id)) }

// LessonDuePrefix is the range of the last-used index.
func LessonDuePrefix() []byte { return []byte("due/lesson/") }

// Lesson lists: the order `lessons list` shows (Tier 1 first, then most
// used, then seeds before learned, then id) is a position string
//
//	<pos> = <tier>/<use><src>/<id>    tier "1" or "2"; <use> as above; src "0"
//	                                  for a seed, "1" for a learned lesson
//
// and three index families keep every lesson at its position, so a page
// of a list is one range scan from the cursor's position:
//
//	list/lesson/<pos>                        → <site>: every lesson
//	list/lesson-cat/<category>/<pos>         → <site>: one category's lessons
//	site/<site>/lesson-list/<host>/<pos>     → <category>: lessons bound to
//	                                           exactly <host> (all Tier 2)

// LessonPos renders a lesson's position in list order.
func LessonPos(tier, useCount int, seed bool, id string) string {
	src := "1"
	if seed {
		src = "0"
	}
	return fmt.Sprintf("%d/%s%s/%s", tier, use(useCount), src, esc(id))
}

// CheckLessonPos reports whether pos has the shape LessonPos renders.
func CheckLessonPos(pos string) bool {
	if len(pos) < 2+16+1+1+1 || (pos[0] != '1' && pos[0] != '2') || pos[1] != '/' {
		return false
	}
	for _, c := range pos[2:18] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	if (pos[18] != '0' && pos[18] != '1') || pos[19] != '/' {
		return false
	}
	id := pos[20:]
	if id == "" || strings.Contains(id, "/") {
		return false
	}
	_, err := url.PathUnescape(id)
	return err == nil
}

// LessonPosOf returns the position at the end of a lesson list key (the
// last three parts).
func LessonPosOf(key []byte) string {
	k := string(key)
	i := strings.LastIndexByte(k, '/')
	if i < 0 {
		return ""
	}
	j := strings.LastIndexByte(k[:i], '/')
	if j < 0 {
		return ""
	}
	h := strings.LastIndexByte(k[:j], '/')
	return k[h+1:]
}

// LessonList is the key of a lesson's entry in the list of every lesson.
func LessonList(pos string) []byte { return []byte("list/lesson/" + pos) }

// LessonListPrefix is the range of the list of every lesson.
func LessonListPrefix() []byte { return []byte("list/lesson/") }

// LessonListByCategory is the key of a lesson's entry in its category's list.
func LessonListByCategory(category, pos string) []byte {
	return []byte("list/lesson-cat/" + esc(category) + "/" + pos)
}

// LessonListCategory is the range of one category's list.
func LessonListCategory(category string) []byte {
	return []byte("list/lesson-cat/" + esc(category) + "/")
}

// LessonListByHost is the key of a host-bound lesson's entry in its host's
// list.
func LessonListByHost(site, host, pos string) []byte {
	return []byte("site/" + esc(site) + "/lesson-list/" + esc(host) + "/" + pos)
}

// LessonListHost is the range of the list of the lessons bound to exactly
// host.
func LessonListHost(site, host string) []byte {
	return []byte("site/" + esc(site) + "/lesson-list/" + esc(host) + "/")
}

// Lesson key families under site/<site>/: the record, and the indexes kept
// with it.
const (
	FamilyLesson     = "lesson"
	FamilyLessonCmd  = "lesson-cmd"
	FamilyLessonHost = "lesson-host"
	FamilyLessonList = "lesson-list"
	FamilyTier1      = "tier1"
	FamilyLessonGen  = "lesson-gen"
)

// SiteFamily returns the family of a key under site/ (the part after
// site/<site>/: "lesson", "lesson-cmd", "fact", ...) and its site, or ""
// for a key that is not under site/.
func SiteFamily(key []byte) (family, site string) {
	rest, ok := strings.CutPrefix(string(key), "site/")
	if !ok {
		return "", ""
	}
	site, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", ""
	}
	family, _, _ = strings.Cut(rest, "/")
	if s, err := url.PathUnescape(site); err == nil {
		site = s
	}
	return family, site
}

// IsGeneration reports whether key is one of a site's generation tokens
// (lesson-gen, fact-gen, selector-gen, session-gen, trajectory/gen): a
// random value rewritten by writes so in-process caches know to reload,
// not memory. A repair or rollback may leave a different token behind.
func IsGeneration(key []byte) bool {
	family, _ := SiteFamily(key)
	switch family {
	case "lesson-gen", "fact-gen", "selector-gen", "session-gen":
		return true
	case "trajectory":
		return strings.HasSuffix(string(key), "/trajectory/gen")
	}
	return false
}

// LessonIndexPrefixes are the ranges outside site/ that hold lesson index
// entries (engine doctor --repair rebuilds them from the records).
func LessonIndexPrefixes() [][]byte {
	return [][]byte{LessonIDPrefix(), LessonDuePrefix(), LessonListPrefix(), []byte("list/lesson-cat/")}
}

// Damaged is where engine doctor --repair moves a record that does not
// decode: out of every index and read path, kept byte for byte for a
// person to look at.
func Damaged(key []byte) []byte { return append([]byte("damaged/"), key...) }

// DamagedPrefix is the range of the records moved aside as damaged.
func DamagedPrefix() []byte { return []byte("damaged/") }

// QuarantinedLesson is the key of a lesson held out of every prompt until
// a person approves or rejects it: outside every site range and index, so
// no recall, list or context can reach it.
func QuarantinedLesson(id string) []byte { return []byte("quarantine/lesson/" + esc(id)) }

// QuarantinedLessons is the range of the quarantined lessons.
func QuarantinedLessons() []byte { return []byte("quarantine/lesson/") }

// Lesson history: every change to a stored lesson keeps the version it
// replaced, and a retracted lesson is held apart with its reason:
//
//	lesson-history/<id>/<seq>   → {version, at, by, op, lesson}: seq is 16
//	                              hex digits, increasing per lesson; the
//	                              last lesson.Options.HistoryKeep are kept
//	lesson-history/<id>         → the next seq (16 hex digits): one Get
//	                              finds it, where a scan costs an iterator
//	retracted/lesson/<id>       → {reason, at, by, lesson}: out of every
//	                              site range and index, kept for audit

// LessonHistory is the key of version seq of lesson id.
func LessonHistory(id string, seq uint64) []byte {
	return History("lesson", id, seq)
}

// LessonHistoryNext is the key of lesson id's next version number.
func LessonHistoryNext(id string) []byte { return HistoryNext("lesson", id) }

// LessonHistoryOf is the range of lesson id's versions, oldest first.
func LessonHistoryOf(id string) []byte { return HistoryOf("lesson", id) }

// RetractedLesson is the key of a retracted lesson.
func RetractedLesson(id string) []byte { return []byte("retracted/lesson/" + esc(id)) }

// RetractedLessons is the range of the retracted lessons.
func RetractedLessons() []byte { return []byte("retracted/lesson/") }

// LessonHistoryPrefix is the range of every lesson's versions (and next
// version numbers).
func LessonHistoryPrefix() []byte { return HistoryPrefix("lesson") }
