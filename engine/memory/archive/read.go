package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/engine-dev/engine/engine"
	"github.com/engine-dev/engine/engine/memory/lesson"
)

// Read parses what path holds, without writing anything: an export
// document, a two-tier memory.json ({"version": 1, "lessons": [...]}), or
// a browser-agent-driver .agent-memory directory (or a directory holding
// one). Notes list what was read but left out, and why. Every problem is
// an engine.ErrInvalid error naming the file.
func (m *Archive) Read(path string) (*Document, []string, error) {
	b, d, notes, err := readPath(path)
	if err != nil || d != nil {
		return d, notes, err
	}
	d, err = ParseFile(b, path)
	return d, nil, err
}

// ReadInput reads what path holds for an import done elsewhere (a memory
// server's POST /v1/import, which cannot read the client's files): a
// file's bytes as they are, for the importer to parse (ParseFile), or a
// .agent-memory directory read and checked here, as Read does, and sent as
// an export document. Notes and errors are Read's, word for word.
func ReadInput(path string) ([]byte, []string, error) {
	b, d, notes, err := readPath(path)
	if err != nil || d == nil {
		return b, nil, err
	}
	b, err = json.Marshal(d)
	return b, notes, err
}

// readPath reads a file's bytes, or a directory into a document.
func readPath(path string) ([]byte, *Document, []string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, nil, invalidIn(path, unwrapPath(err))
	}
	if fi.IsDir() {
		d, notes, err := readAgentMemory(path)
		return nil, d, notes, err
	}
	b, err := engine.ReadInputFile(path, engine.MaxInputFile)
	if err != nil {
		return nil, nil, nil, invalidIn(path, unwrapPath(err))
	}
	return b, nil, nil, nil
}

// unwrapPath drops the path from an *os.PathError (the caller names the
// file).
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, os.ErrNotExist) {
			return errors.New("no such file or directory")
		}
		return pe.Err
	}
	return err
}

// ParseFile parses an export document or a memory.json held in b; name is
// the file it came from, for errors.
func ParseFile(b []byte, name string) (*Document, error) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, invalidIn(name, engine.JSONProblem(b, err))
	}
	if raw, ok := head["format"]; ok {
		var format string
		if err := json.Unmarshal(raw, &format); err != nil || format != Format {
			return nil, invalidIn(name, fmt.Errorf("format %s is not %q", raw, Format))
		}
		var d Document
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return nil, invalidIn(name, engine.JSONProblem(b, err))
		}
		if d.Version != Version {
			return nil, invalidIn(name, fmt.Errorf("export version %d: this engine reads version %d", d.Version, Version))
		}
		d.fillEmpty()
		return &d, nil
	}
	if _, ok := head["lessons"]; ok {
		ls, err := lesson.ReadFile(bytes.NewReader(b), name)
		if err != nil {
			return nil, engine.MarkInvalid(err) // lesson.ReadFile names the file
		}
		d := &Document{Format: Format, Version: Version, Lessons: ls}
		d.fillEmpty()
		return d, nil
	}
	return nil, invalidIn(name, errors.New(`neither an engine export ("format": "engine-export") nor a memory.json ("lessons")`))
}
