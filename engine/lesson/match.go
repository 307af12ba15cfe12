package lesson

import (
	"bytes"
	"strconv"
	"strings"
)

// matchEntry is what the error-recall index holds for a lesson, beside the
// failed_command and use_count its key carries: enough to score and rank a
// candidate without decoding the lesson, and the lesson itself, so a recall
// decodes its winners without another read.
type matchEntry struct {
	id       string
	useCount int
	domain   string
	pattern  string // lower-cased error_pattern
	helped   int
	shown    int
	lastUsed string
	record   []byte // the lesson's JSON
}

// encodeMatch renders l's match entry: domain, pattern, helped (and
// ",shown" once shown, for ranking: Unhelpful), last_used and the lesson's
// JSON, separated by NUL bytes (the first four cannot hold one, and the
// JSON comes last).
func encodeMatch(l *Lesson, record []byte) []byte {
	counts := strconv.Itoa(l.Helped)
	if l.Shown > 0 {
		counts += "," + strconv.Itoa(l.Shown)
	}
	head := strings.Join([]string{l.Domain, strings.ToLower(l.ErrorPattern), counts, l.LastUsed, ""}, "\x00")
	return append([]byte(head), record...)
}

// decodeMatch parses a match entry; v is only valid during the scan, so the
// record is copied.
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
		helped: helped, shown: shown, lastUsed: string(parts[3]), record: parts[4]}, true
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
