package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/event"
	"github.com/engine-dev/engine/engine/memory"
	"github.com/engine-dev/engine/engine/memory/history"
	"github.com/engine-dev/engine/engine/memory/lesson"
	"github.com/engine-dev/engine/kv"
)

// StreamChunk is how many lessons ImportStream validates and writes at a
// time: its memory is bounded by one chunk, not by the file.
const StreamChunk = 2000

// streamGCPercent is the Go GC target (GOGC) while ImportStream runs. Most
// of an import's live heap is badger's table builders ([]byte buffers the
// GC need not scan), and GOGC=100 lets the heap grow to twice that before
// a collection: at 50 the peak RSS of a 10k-lesson import drops by ~30 %
// and of a 100k one by ~15 % for the same CPU; 25 saves more but costs
// CPU (docs/benchmarks.md, "Import").
const streamGCPercent = 50

// lowerGC sets the GC target to streamGCPercent unless the process runs a
// lower one (or none), and returns what restores it.
func lowerGC() (restore func()) {
	old := debug.SetGCPercent(streamGCPercent)
	if old < streamGCPercent { // lower already, or off (-1)
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

// ImportStream imports an export document read from r record by record:
// lessons are decoded one at a time and validated, redacted and written in
// chunks of StreamChunk through one kv.Journal, so memory is bounded by a
// chunk, not by the file; the other kinds (small beside the lessons) are
// decoded whole and imported last. It is all or nothing like Import: bad
// input ("<source>: lessons[N]: …", "<source>: record N: …" for JSON that
// does not decode) or a store error rolls back every chunk written, and a
// crash leaves the journal that the store's next open rolls back. Unlike
// Import, lessons of one identity in different chunks replace each other
// instead of adding up (an export holds each lesson once). While it runs
// the process's GC target is lowered to streamGCPercent (imports run one
// at a time, under the store's write lock).
func (m *Archive) ImportStream(ctx context.Context, r io.Reader, source string) (*Result, error) {
	defer lowerGC()()
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	bad := func(err error) error { return invalidIn(source, err) }
	if err := expectDelim(dec, '{'); err != nil {
		return nil, bad(err)
	}
	var j *kv.Journal
	var events []event.Event
	abort := func(err error) (*Result, error) {
		if j != nil {
			if aerr := j.Abort(ctx); aerr != nil {
				return nil, fmt.Errorf("%w; %w", err, aerr)
			}
		}
		return nil, err
	}
	// write stages d's records, as Import does, and writes them through
	// the journal; offset is the index of d's first lesson in the file.
	write := func(d *Document, offset int) error {
		if j == nil {
			var err error
			if j, err = kv.Begin(ctx, m.DB(), m.apply); err != nil {
				return fmt.Errorf("import: %w", err)
			}
		}
		m.redact(d)
		ops, evs, err := m.stage(ctx, d, source, offset)
		if err != nil {
			return err
		}
		events = append(events, evs...)
		if err := j.Write(ctx, ops); err != nil {
			j = nil // rolled back
			return fmt.Errorf("import: %w", err)
		}
		return nil
	}
	d := Document{}
	seen := map[string]bool{}
	lessons := 0
	// One chunk's slice, decoded into in place and reused: nothing keeps
	// a lesson of it once write returns (Prepare copies them).
	chunk := make([]lesson.Lesson, 0, StreamChunk)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return abort(bad(fmt.Errorf("record %d: %w", lessons, err)))
		}
		key, _ := tok.(string)
		if seen[key] {
			return abort(bad(fmt.Errorf("field %q twice", key)))
		}
		seen[key] = true
		var into any
		switch key {
		case "format":
			into = &d.Format
		case "version":
			into = &d.Version
		case "exported_at":
			into = &d.ExportedAt
		case "facts":
			into = &d.Facts
		case "selectors":
			into = &d.Selectors
		case "trajectories":
			into = &d.Trajectories
		case "sessions":
			into = &d.Sessions
		case "runs":
			into = &d.Runs
		case "plans":
			into = &d.Plans
		case "history":
			// Written at once, before the records that follow it.
			var h []history.Entry
			if err := dec.Decode(&h); err != nil {
				return abort(bad(fmt.Errorf("history: %w", err)))
			}
			if err := write(&Document{History: h}, 0); err != nil {
				return abort(err)
			}
			continue
		case "lessons":
			if err := expectDelim(dec, '['); err != nil {
				return abort(bad(fmt.Errorf("lessons: %w", err)))
			}
			for dec.More() {
				chunk = append(chunk, lesson.Lesson{})
				if err := dec.Decode(&chunk[len(chunk)-1]); err != nil {
					return abort(bad(fmt.Errorf("lessons[%d]: %w", lessons, err)))
				}
				lessons++
				if len(chunk) == StreamChunk {
					if err := write(&Document{Lessons: chunk}, lessons-len(chunk)); err != nil {
						return abort(err)
					}
					chunk = chunk[:0]
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return abort(bad(fmt.Errorf("lessons: %w", err)))
			}
			continue
		default:
			return abort(bad(fmt.Errorf("unknown field %q", key)))
		}
		if err := dec.Decode(into); err != nil {
			return abort(bad(fmt.Errorf("%s: %w", key, err)))
		}
		if key == "format" && d.Format != Format {
			return abort(bad(fmt.Errorf("format %q is not %q", d.Format, Format)))
		}
		if key == "version" && d.Version != Version {
			return abort(bad(fmt.Errorf("export version %d: this engine reads version %d", d.Version, Version)))
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return abort(bad(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return abort(bad(errors.New("more after the document")))
	}
	if !seen["format"] {
		return abort(bad(errors.New(`not an engine export ("format": "engine-export")`)))
	}
	if !seen["version"] {
		return abort(bad(fmt.Errorf("export version 0: this engine reads version %d", Version)))
	}
	// The rest: the last lessons and every other kind, in one write.
	rest := d
	rest.Lessons = chunk
	res := &Result{}
	now := m.Now()
	rest.Trajectories = nil
	for _, t := range d.Trajectories {
		if expired(t.RecordedAt, now) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("trajectory %q on %s: recorded %s, expired", t.Goal, t.Domain, t.RecordedAt.Format(time.DateOnly)))
			continue
		}
		rest.Trajectories = append(rest.Trajectories, t)
	}
	if err := write(&rest, lessons-len(chunk)); err != nil {
		return abort(err)
	}
	if m.check != nil {
		if err := m.check(); err != nil {
			return abort(bad(err))
		}
	}
	if err := j.Commit(ctx); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	for _, e := range events {
		m.Events().Emit(e.Name, e.Fields)
	}
	rest.Lessons = make([]lesson.Lesson, lessons) // counted, not held
	res.Imported, res.SHA256 = rest.Count(), m.sha256
	return res, nil
}

// stage runs every kind's prepare and write for d (already redacted) into
// a kv.Staging over the store and returns the staged ops and the events,
// for Import and ImportStream to write; offset is the index of d's first
// lesson in the file, for errors.
func (m *Archive) stage(ctx context.Context, d *Document, source string, offset int) ([]kv.Op, []event.Event, error) {
	stage := kv.NewStaging(m.DB())
	var events []event.Event
	prov := m.Provenance()
	prov.Source, prov.File, prov.SHA256 = engine.SourceImported, m.file, m.sha256
	sm := New(memory.New(stage, memory.Options{Now: m.Clock(), Events: func(e event.Event) { events = append(events, e) }, Provenance: prov,
		HistoryKeep: m.HistoryKeep()}), Options{Trust: m.trust, Redactor: m.red})
	// The versions first: a record's are taken only while it has none
	// kept, and writing the record keeps one.
	keepHistory, err := sm.prepareHistory(d)
	if err != nil {
		return nil, nil, invalidIn(source, err)
	}
	commits := make([]func(context.Context) error, len(kinds))
	for i, k := range kinds {
		commit, err := k.prepare(sm, d)
		if err != nil {
			if k.name == "lessons" && offset > 0 {
				err = sm.lessonAt(d.Lessons, offset)
			}
			return nil, nil, invalidIn(source, err)
		}
		commits[i] = commit
	}
	if err := keepHistory(ctx); err != nil {
		return nil, nil, fmt.Errorf("import history: %w (nothing written)", err)
	}
	for i, commit := range commits {
		if err := commit(ctx); err != nil {
			return nil, nil, fmt.Errorf("import %s: %w (nothing written)", kinds[i].name, err)
		}
	}
	return stage.Ops(), events, nil
}

// lessonAt finds the lesson of ls that Prepare refuses and names it by its
// index in the file (offset is ls[0]'s).
func (m *Archive) lessonAt(ls []lesson.Lesson, offset int) error {
	for i := range ls {
		if _, err := m.Lessons.Prepare(ls[i:i+1], lesson.ImportOptions{KeepTrust: m.trust}); err != nil {
			if inner := errors.Unwrap(err); inner != nil {
				err = inner
			}
			return fmt.Errorf("lessons[%d]: %w", offset+i, err)
		}
	}
	return errors.New("lessons: a chunk was refused but none of its lessons alone")
}

// expectDelim reads the next token and checks it is delim.
func expectDelim(dec *json.Decoder, delim json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("unexpected end of file (is it truncated?)")
		}
		return err
	}
	if tok != delim {
		return fmt.Errorf("%v where %q was expected", tok, delim)
	}
	return nil
}
