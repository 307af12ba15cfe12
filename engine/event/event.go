// Package event defines the memory events: a structured record of every
// retrieval, recording, promotion and pruning the memory does, so a person
// can check what a run read and changed.
//
// Memory packages emit events through a Func they are given; they never
// decide where events go. The names and fields are the two-tier memory
// design's: tier1_loaded, error_recall, domain_recall, lesson_recorded,
// lesson_deduplicated, lesson_promoted, lessons_pruned.
package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sync"
)

// Event is one memory event. Name is the value of the "event" field; Fields
// are the rest, marshalled beside it.
type Event struct {
	Name   string
	Fields map[string]any
}

// MarshalJSON renders {"event": Name, ...Fields}: the name first, then the
// fields in key order, so lines read alike and grep well.
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	// An Encoder writes what json.Marshal returns, and a newline, into b:
	// no slice to allocate per key and value.
	enc := json.NewEncoder(&b)
	put := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1)
		return nil
	}
	b.WriteString(`{"event":`)
	if err := put(e.Name); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		if k == "event" {
			continue
		}
		b.WriteByte(',')
		_ = put(k) // a string always encodes
		b.WriteByte(':')
		if err := put(e.Fields[k]); err != nil {
			return nil, fmt.Errorf("event %s: field %s: %w", e.Name, k, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Func receives events. A nil Func drops them.
type Func func(Event)

// Emit calls f with the event when f is not nil.
func (f Func) Emit(name string, fields map[string]any) {
	if f != nil {
		f(Event{Name: name, Fields: fields})
	}
}

// The memory event names.
const (
	Tier1Loaded        = "tier1_loaded"
	ErrorRecall        = "error_recall"
	DomainRecall       = "domain_recall"
	LessonRecorded     = "lesson_recorded"
	LessonDeduplicated = "lesson_deduplicated"
	LessonPromoted     = "lesson_promoted"
	LessonsPruned      = "lessons_pruned"
	// LessonLogSkipped: an action log given to learning again teaches
	// nothing the second time.
	LessonLogSkipped = "lesson_log_skipped"
	// RecordsDamaged: a read skipped records or index entries it could not
	// read (fields: store, op, skipped, keys); engine doctor --repair
	// mends them.
	RecordsDamaged = "records_damaged"
	// LessonQuarantined: a lesson whose text failed the screen
	// (engine/trust/injection) is held out of every prompt (fields: id, lesson,
	// reason, source).
	LessonQuarantined = "lesson_quarantined"
	// LessonTrusted: a candidate lesson became trusted, by evidence or
	// an operator's approval (fields: id, lesson, why).
	LessonTrusted = "lesson_trusted"
	// LessonUsedOffSite: a lesson bound to a domain was used on a site
	// outside it; it keeps its domain and the site joins its
	// triggered_domains (fields: id, lesson, domain, site,
	// triggered_domains).
	LessonUsedOffSite = "lesson_used_off_site"
	// LessonWidened: a learned lesson, bound to the site it was learned
	// on, was seen on an unrelated site and now applies to every site
	// (fields: id, lesson, from, triggered_domains).
	LessonWidened = "lesson_widened"
)

// JSONL writes events as JSON lines. It is safe for concurrent use.
type JSONL struct {
	mu  sync.Mutex
	w   io.Writer
	c   io.Closer
	err error
}

// NewJSONL writes events to w.
func NewJSONL(w io.Writer) *JSONL { return &JSONL{w: w} }

// AppendFile opens path for appending events, creating it if needed.
func AppendFile(path string) (*JSONL, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("events file: %w", err)
	}
	return &JSONL{w: f, c: f}, nil
}

// Write appends one event. The first write error is kept and returned by
// Close; later events are dropped.
func (j *JSONL) Write(e Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	// MarshalJSON's output is compact and escaped already (every part
	// comes from json.Marshal): json.Marshal(e) would only copy it again.
	b, err := e.MarshalJSON()
	if err == nil {
		_, err = j.w.Write(append(b, '\n'))
	}
	j.err = err
}

// Close closes the file and reports the first error seen.
func (j *JSONL) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.c != nil {
		if err := j.c.Close(); err != nil && j.err == nil {
			j.err = err
		}
	}
	if j.err != nil {
		return fmt.Errorf("writing events: %w", j.err)
	}
	return nil
}
