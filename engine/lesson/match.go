package lesson

import (
	"bytes"
	"strconv"
	"strings"
)

// matchEntry is what the error-recall index holds for a lesson, beside the
// failed_command and use_count its key carries: enough to score and rank a
// candidate without decoding the lesson.
type matchEntry struct {
	id       string
	useCount int
	domain   string
	pattern  string // lower-cased error_pattern
	helped   int
	lastUsed string
}

// encodeMatch renders l's match entry: domain, pattern, helped and
// last_used, separated by NUL bytes (none of them can hold one).
func encodeMatch(l *Lesson) []byte {
	return []byte(strings.Join([]string{l.Domain, strings.ToLower(l.ErrorPattern), strconv.Itoa(l.Helped), l.LastUsed}, "\x00"))
}

func decodeMatch(id string, useCount int, v []byte) (matchEntry, bool) {
	parts := bytes.Split(v, []byte{0})
	if len(parts) != 4 {
		return matchEntry{}, false
	}
	helped, err := strconv.Atoi(string(parts[2]))
	if err != nil {
		return matchEntry{}, false
	}
	return matchEntry{id: id, useCount: useCount, domain: string(parts[0]), pattern: string(parts[1]),
		helped: helped, lastUsed: string(parts[3])}, true
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
