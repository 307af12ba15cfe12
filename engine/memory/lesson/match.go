package lesson

import (
	"bytes"
	"strconv"
	"strings"
)

// matchEntry is what the error-recall index holds for a lesson, beside the
// failed_command and use_count its key carries: enough to score and rank
// the lesson as a recall's contender without decoding it. A recall reads the records of
// the lessons it returns (keyspace.Lesson) by key: the entry holds no copy
// of the lesson (since schema 3), which had made the index the largest
// part of the store (a third of an import's bytes).
type matchEntry struct {
	id       string
	useCount int
	domain   string
	pattern  string // lower-cased error_pattern
	helped   int
	shown    int
	lastUsed string
}

// encodeMatch renders l's match entry: domain, pattern, helped (and
// ",shown" once shown, for ranking: Unhelpful) and last_used, each followed
// by a NUL byte (none of them can hold one). An entry written before
// schema 3 has the lesson's JSON after the last NUL: decodeMatch ignores it.
func encodeMatch(l *Lesson) []byte {
	counts := strconv.Itoa(l.Helped)
	if l.Shown > 0 {
		counts += "," + strconv.Itoa(l.Shown)
	}
	return []byte(strings.Join([]string{l.Domain, strings.ToLower(l.ErrorPattern), counts, l.LastUsed, ""}, "\x00"))
}

// decodeMatch parses a match entry; v is only valid during the scan, so
// what it keeps is copied.
func decodeMatch(id string, useCount int, v []byte) (matchEntry, bool) {
	parts := bytes.SplitN(v, []byte{0}, 5)
	if len(parts) != 5 {
		return matchEntry{}, false
	}
	h, sh, hasShown := strings.Cut(string(parts[2]), ",") // an entry written before counts has no ",shown"
	helped, err := strconv.Atoi(h)
	if err != nil {
		return matchEntry{}, false
	}
	shown := 0
	if hasShown {
		if shown, err = strconv.Atoi(sh); err != nil {
			return matchEntry{}, false
		}
	}
	return matchEntry{id: id, useCount: useCount, domain: string(parts[0]), pattern: string(parts[1]),
		helped: helped, shown: shown, lastUsed: string(parts[3])}, true
}

// matchHead is a match entry without the copy of the lesson an entry
// written before schema 3 ends with: what encodeMatch writes now.
func matchHead(v []byte) []byte {
	end := 0
	for range 4 {
		i := bytes.IndexByte(v[end:], 0)
		if i < 0 {
			return v
		}
		end += i + 1
	}
	return v[:end]
}

// useFromKey reads the use count from a key's "<use>/<id>" tail.
func useFromKey(key []byte) (int, bool) {
	k := string(key)
	end := strings.LastIndexByte(k, '/')
	if end < 16 {
		return 0, false
	}
	u, err := strconv.ParseUint(k[end-16:end], 16, 64)
	if err != nil {
		return 0, false
	}
	return int(^u), true
}
